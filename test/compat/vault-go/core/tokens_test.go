package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

func TestTokenCreateAndLookup(t *testing.T) {
	c := h.Client(t)
	// TokenCreateRequest always sends `type`, `display_name`, `num_uses` and `entity_alias`, empty.
	secret, err := c.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"default"}, TTL: "1h", Metadata: map[string]string{"team": "go"}})
	h.Must(t, "Create", err)
	token, err := secret.TokenID()
	h.Must(t, "TokenID", err)
	accessor, err := secret.TokenAccessor()
	h.Must(t, "TokenAccessor", err)
	ttl, err := secret.TokenTTL()
	h.Must(t, "TokenTTL", err)
	renewable, err := secret.TokenIsRenewable()
	h.Must(t, "TokenIsRenewable", err)
	policies, err := secret.TokenPolicies()
	h.Must(t, "TokenPolicies", err)
	if !strings.HasPrefix(token, "hvs.") || accessor == "" || ttl != time.Hour || !renewable || !contains(policies, "default") {
		t.Fatalf("Create: token %q accessor %q ttl %v renewable %v policies %v", token, accessor, ttl, renewable, policies)
	}
	// A root token's children are children, not orphans.
	if secret.Auth.Orphan || secret.Auth.LeaseDuration != 3600 {
		t.Fatalf("Create: orphan %v lease_duration %d", secret.Auth.Orphan, secret.Auth.LeaseDuration)
	}
	looked, err := c.Auth().Token().Lookup(token)
	h.Must(t, "Lookup", err)
	if looked.Data["id"] != token || looked.Data["orphan"] != false || looked.Data["ttl"] != json.Number("3600") {
		t.Fatalf("Lookup: %+v", looked.Data)
	}
	if meta, _ := looked.Data["meta"].(map[string]interface{}); meta["team"] != "go" {
		t.Fatalf("Lookup meta: %+v", looked.Data["meta"])
	}
	byAccessor, err := c.Auth().Token().LookupAccessor(accessor)
	h.Must(t, "LookupAccessor", err)
	if byAccessor.Data["accessor"] != accessor || byAccessor.Data["id"] != "" {
		t.Fatalf("LookupAccessor: %+v", byAccessor.Data)
	}
	self, err := h.WithToken(t, c, token).Auth().Token().LookupSelf()
	h.Must(t, "LookupSelf", err)
	if self.Data["id"] != token || self.Data["path"] != "auth/token/create" {
		t.Fatalf("LookupSelf: %+v", self.Data)
	}
	orphan, err := c.Auth().Token().CreateOrphan(&vault.TokenCreateRequest{Policies: []string{"default"}})
	h.Must(t, "CreateOrphan", err)
	if !orphan.Auth.Orphan {
		t.Fatal("CreateOrphan: not an orphan")
	}
	noParent, err := c.Auth().Token().Create(&vault.TokenCreateRequest{NoParent: true, Type: "service"})
	h.Must(t, "Create no_parent", err)
	if !noParent.Auth.Orphan {
		t.Fatal("Create no_parent: not an orphan")
	}
	batch, err := c.Auth().Token().Create(&vault.TokenCreateRequest{Type: "batch", TTL: "10m", Policies: []string{"default"}})
	h.Must(t, "Create batch", err)
	if !strings.HasPrefix(batch.Auth.ClientToken, "hvb.") || batch.Auth.Renewable {
		t.Fatalf("Create batch: %+v", batch.Auth)
	}
	// Token roles are not implemented: the client surfaces the error.
	if _, err := c.Auth().Token().CreateWithRole(&vault.TokenCreateRequest{}, "nope"); err == nil {
		t.Fatal("CreateWithRole: expected an error")
	}
	if _, err := c.Auth().Token().Lookup("hvs.not-a-token"); h.StatusOf(err) != 400 && h.StatusOf(err) != 403 {
		t.Fatalf("Lookup of a bad token: %v", err)
	}
}

func TestTokenRenewAndRevoke(t *testing.T) {
	c := h.Client(t)
	// The default policy does not allow creating tokens (as in Vault): the tree's tokens get this one.
	creator := h.Name("go-token-creator")
	h.Must(t, "PutPolicy", c.Sys().PutPolicy(creator, `path "auth/token/create" { capabilities = ["update"] }`))
	create := func(parent *vault.Client, ttl string) *vault.Secret {
		s, err := parent.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"default", creator}, TTL: ttl, ExplicitMaxTTL: "5h"})
		h.Must(t, "Create", err)
		return s
	}
	a := create(c, "1h")
	renewed, err := c.Auth().Token().Renew(a.Auth.ClientToken, 7200)
	h.Must(t, "Renew", err)
	if renewed.Auth.LeaseDuration != 7200 {
		t.Fatalf("Renew: %d", renewed.Auth.LeaseDuration)
	}
	self := h.WithToken(t, c, a.Auth.ClientToken)
	renewed, err = self.Auth().Token().RenewSelf(1800)
	h.Must(t, "RenewSelf", err)
	if renewed.Auth.LeaseDuration != 1800 {
		t.Fatalf("RenewSelf: %d", renewed.Auth.LeaseDuration)
	}
	renewed, err = c.Auth().Token().RenewTokenAsSelf(a.Auth.ClientToken, 600)
	h.Must(t, "RenewTokenAsSelf", err)
	if renewed.Auth.LeaseDuration != 600 {
		t.Fatalf("RenewTokenAsSelf: %d", renewed.Auth.LeaseDuration)
	}
	renewed, err = c.Auth().Token().RenewAccessor(a.Auth.Accessor, 900)
	h.Must(t, "RenewAccessor", err)
	if renewed.Auth.LeaseDuration != 900 {
		t.Fatalf("RenewAccessor: %d", renewed.Auth.LeaseDuration)
	}
	// Renewal stops at the explicit max TTL.
	renewed, err = c.Auth().Token().Renew(a.Auth.ClientToken, 36000)
	h.Must(t, "Renew past the max", err)
	if renewed.Auth.LeaseDuration > 5*3600 || renewed.Auth.LeaseDuration < 5*3600-5 {
		t.Fatalf("Renew past the max: %d", renewed.Auth.LeaseDuration)
	}

	// A tree: parent -> child -> grandchild; revoke-orphan keeps the child alive.
	parent := create(c, "1h")
	child := create(h.WithToken(t, c, parent.Auth.ClientToken), "30m")
	grandchild := create(h.WithToken(t, c, child.Auth.ClientToken), "10m")
	h.Must(t, "RevokeOrphan", c.Auth().Token().RevokeOrphan(parent.Auth.ClientToken))
	alive(t, c, child.Auth.ClientToken, true)
	looked, err := c.Auth().Token().Lookup(child.Auth.ClientToken)
	h.Must(t, "Lookup", err)
	if looked.Data["orphan"] != true {
		t.Fatalf("child after RevokeOrphan: %+v", looked.Data)
	}
	h.Must(t, "RevokeTree", c.Auth().Token().RevokeTree(child.Auth.ClientToken))
	alive(t, c, grandchild.Auth.ClientToken, false)

	b := create(c, "1h")
	h.Must(t, "RevokeAccessor", c.Auth().Token().RevokeAccessor(b.Auth.Accessor))
	alive(t, c, b.Auth.ClientToken, false)
	d := create(c, "1h")
	h.Must(t, "RevokeSelf", h.WithToken(t, c, d.Auth.ClientToken).Auth().Token().RevokeSelf(""))
	alive(t, c, d.Auth.ClientToken, false)
}

// The LifetimeWatcher renews a token through renew-self, as long-running Vault clients do.
func TestLifetimeWatcher(t *testing.T) {
	c := h.Client(t)
	secret, err := c.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"default"}, TTL: "1h"})
	h.Must(t, "Create", err)
	watcher, err := h.WithToken(t, c, secret.Auth.ClientToken).NewLifetimeWatcher(&vault.LifetimeWatcherInput{Secret: secret, Increment: 3000})
	h.Must(t, "NewLifetimeWatcher", err)
	go watcher.Start()
	defer watcher.Stop()
	select {
	case renewal := <-watcher.RenewCh():
		if renewal.Secret.Auth.LeaseDuration != 3000 {
			t.Fatalf("renewal: %d", renewal.Secret.Auth.LeaseDuration)
		}
	case err := <-watcher.DoneCh():
		t.Fatalf("watcher stopped: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no renewal within 20s")
	}
}

func alive(t *testing.T, c *vault.Client, token string, want bool) {
	t.Helper()
	_, err := h.WithToken(t, c, token).Auth().Token().LookupSelf()
	if (err == nil) != want {
		t.Fatalf("token alive = %v, want %v (%v)", err == nil, want, err)
	}
}

// Token roles through the Go client: roles written and read with Logical(), tokens made with
// Auth().Token().CreateWithRole, their path, role, orphan state and period as Vault shows them.
func TestTokenRoles(t *testing.T) {
	c := h.Client(t)
	role := h.Name("go-role")
	_, err := c.Logical().Write("sys/policies/acl/"+role, map[string]interface{}{"policy": `path "secret/*" { capabilities = ["read"] }`})
	h.Must(t, "policy", err)
	_, err = c.Logical().Write("auth/token/roles/"+role, map[string]interface{}{
		"allowed_policies": []string{role}, "orphan": true, "token_period": "1h", "path_suffix": "ci",
	})
	h.Must(t, "write role", err)
	read, err := c.Logical().Read("auth/token/roles/" + role)
	h.Must(t, "read role", err)
	if read.Data["token_period"] != json.Number("3600") || read.Data["orphan"] != true || read.Data["name"] != role {
		t.Fatalf("role: %#v", read.Data)
	}
	list, err := c.Logical().List("auth/token/roles")
	h.Must(t, "list roles", err)
	if !strings.Contains(strings.Join(toStrings(list.Data["keys"]), ","), role) {
		t.Fatalf("roles: %v", list.Data["keys"])
	}
	secret, err := c.Auth().Token().CreateWithRole(&vault.TokenCreateRequest{}, role)
	h.Must(t, "CreateWithRole", err)
	if secret.Auth.Orphan != true || strings.Join(secret.Auth.Policies, ",") != "default,"+role || secret.Auth.LeaseDuration != 3600 {
		t.Fatalf("auth: %#v", secret.Auth)
	}
	info, err := c.Auth().Token().Lookup(secret.Auth.ClientToken)
	h.Must(t, "Lookup", err)
	if info.Data["path"] != "auth/token/create/"+role+"/ci" || info.Data["role"] != role {
		t.Fatalf("lookup: %#v", info.Data)
	}
	if _, err := c.Auth().Token().CreateWithRole(&vault.TokenCreateRequest{Policies: []string{"root"}}, role); h.StatusOf(err) != 400 {
		t.Fatalf("a policy outside the role: %v", err)
	}
	_, err = c.Logical().Delete("auth/token/roles/" + role)
	h.Must(t, "delete role", err)
	if _, err := c.Auth().Token().CreateWithRole(&vault.TokenCreateRequest{}, role); h.StatusOf(err) != 400 || !strings.Contains(err.Error(), "unknown role") {
		t.Fatalf("deleted role: %v", err)
	}
}

func toStrings(v interface{}) []string {
	var out []string
	for _, x := range v.([]interface{}) {
		out = append(out, x.(string))
	}
	return out
}
