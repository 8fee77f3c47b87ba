package core

import (
	"encoding/json"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

func TestLeases(t *testing.T) {
	c := h.Client(t)
	path := h.Name("go-leases")
	h.Must(t, "Mount", c.Sys().Mount(path, &vault.MountInput{Type: "hangar-test"}))
	defer c.Sys().Unmount(path)
	issue := func() *vault.Secret {
		s, err := c.Logical().Read(path + "/creds/app")
		h.Must(t, "Read creds", err)
		if s.LeaseID == "" || !strings.HasPrefix(s.LeaseID, path+"/creds/app/") || s.LeaseDuration != 3600 || !s.Renewable {
			t.Fatalf("lease: %q %d %v", s.LeaseID, s.LeaseDuration, s.Renewable)
		}
		return s
	}
	a := issue()
	looked, err := c.Sys().Lookup(a.LeaseID)
	h.Must(t, "Lookup", err)
	if looked.Data["id"] != a.LeaseID || looked.Data["ttl"] != json.Number("3600") || looked.Data["renewable"] != true {
		t.Fatalf("Lookup: %+v", looked.Data)
	}
	renewed, err := c.Sys().Renew(a.LeaseID, 7200)
	h.Must(t, "Renew", err)
	if renewed.LeaseID != a.LeaseID || renewed.LeaseDuration != 7200 {
		t.Fatalf("Renew: %+v", renewed)
	}
	// vault/api sends `increment: 0`; a raw null is "not given" too.
	_, err = c.Sys().Renew(a.LeaseID, 0)
	h.Must(t, "Renew 0", err)
	_, err = c.Logical().Write("sys/leases/renew", map[string]interface{}{"lease_id": a.LeaseID, "increment": nil})
	h.Must(t, "renew with a null increment", err)
	list, err := c.Logical().List("sys/leases/lookup/" + path + "/creds/app")
	h.Must(t, "List sys/leases/lookup", err)
	if keys, _ := list.Data["keys"].([]interface{}); len(keys) != 1 {
		t.Fatalf("List sys/leases/lookup: %+v", list.Data)
	}
	h.Must(t, "Revoke", c.Sys().Revoke(a.LeaseID))
	if _, err := c.Sys().Lookup(a.LeaseID); err == nil {
		t.Fatal("Lookup after Revoke: expected an error")
	}
	b := issue()
	h.Must(t, "RevokeWithOptions", c.Sys().RevokeWithOptions(&vault.RevokeOptions{LeaseID: b.LeaseID, Sync: true}))
	issue()
	issue()
	h.Must(t, "RevokePrefix", c.Sys().RevokePrefix(path+"/creds"))
	if list, err := c.Logical().List("sys/leases/lookup/" + path + "/creds/app"); err != nil || list != nil {
		t.Fatalf("List after RevokePrefix: %+v, %v", list, err)
	}
	issue()
	h.Must(t, "RevokeForce", c.Sys().RevokeForce(path+"/creds"))
	if _, err := c.Sys().Renew("no/such/lease", 0); h.StatusOf(err) != 400 {
		t.Fatalf("Renew of an unknown lease: %v", err)
	}
}
