package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

// What the public service's CLI and Terraform provider rely on beyond the client calls: the API
// version, sys/internal/ui/mounts, sys/remount, the operator endpoints, token display names and times.

func TestVersionAndOperator(t *testing.T) {
	c := h.Client(t)
	health, err := c.Sys().Health()
	h.Must(t, "Health", err)
	seal, err := c.Sys().SealStatus()
	h.Must(t, "SealStatus", err)
	if health.Version != "1.21.1" || seal.Version != "1.21.1" || health.Enterprise {
		t.Fatalf("versions: health %+v, seal-status %+v", health, seal)
	}
	ha, err := c.Sys().HAStatus()
	h.Must(t, "HAStatus", err)
	if len(ha.Nodes) != 1 || !ha.Nodes[0].ActiveNode || ha.Nodes[0].Version != "1.21.1" {
		t.Fatalf("HAStatus: %+v", ha)
	}
	h.Must(t, "StepDown", c.Sys().StepDown())
	history, err := c.Logical().List("sys/version-history")
	h.Must(t, "List sys/version-history", err)
	if fmt.Sprint(history.Data["keys"]) != "[1.21.1]" {
		t.Fatalf("version-history: %v", history.Data)
	}
	if _, err := c.Logical().Read("sys/storage/raft/configuration"); h.StatusOf(err) != 400 || !strings.Contains(err.Error(), "raft storage is not in use") {
		t.Fatalf("raft configuration: %v", err)
	}
}

func TestInternalUIMounts(t *testing.T) {
	c := h.Client(t)
	path := h.Name("go-ui-kv")
	h.Must(t, "Mount", c.Sys().Mount(path, &vault.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}))
	// What the `vault kv` CLI reads to learn a mount's KV version (kvPreflightVersionRequest).
	read := func(client *vault.Client, p string) (*vault.Secret, error) {
		return client.Logical().Read("sys/internal/ui/mounts/" + p)
	}
	secret, err := read(c, path+"/data/app")
	h.Must(t, "Read sys/internal/ui/mounts", err)
	options, _ := secret.Data["options"].(map[string]interface{})
	if secret.Data["type"] != "kv" || options["version"] != "2" || secret.Data["path"] != path+"/" {
		t.Fatalf("internal/ui/mounts: %v", secret.Data)
	}
	policy := h.Name("go-ui")
	h.Must(t, "PutPolicy", c.Sys().PutPolicy(policy, fmt.Sprintf(`path "%s/data/team/*" { capabilities = ["read"] }`, path)))
	created, err := c.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{policy}, NoDefaultPolicy: true})
	h.Must(t, "Token create", err)
	reader := h.WithToken(t, c, created.Auth.ClientToken)
	if _, err := read(reader, path); err != nil {
		t.Fatalf("a token with read under the mount: %v", err)
	}
	if _, err := read(reader, "sys"); h.StatusOf(err) != 403 || !strings.Contains(err.Error(), "preflight capability check returned 403") {
		t.Fatalf("a token without access: %v", err)
	}
	list, err := reader.Logical().Read("sys/internal/ui/mounts")
	h.Must(t, "Read sys/internal/ui/mounts", err)
	if mounts, _ := list.Data["secret"].(map[string]interface{}); len(mounts) != 1 || mounts[path+"/"] == nil {
		t.Fatalf("the token's mounts: %v", list.Data)
	}
}

func TestRemount(t *testing.T) {
	c := h.Client(t)
	from, to := h.Name("go-move"), h.Name("go-moved")
	h.Must(t, "Mount", c.Sys().Mount(from, &vault.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}))
	h.Write(t, c, from+"/data/app", map[string]interface{}{"data": map[string]interface{}{"k": "v"}})
	started, err := c.Sys().StartRemount(from, to)
	h.Must(t, "StartRemount", err)
	status, err := c.Sys().RemountStatus(started.MigrationID)
	h.Must(t, "RemountStatus", err)
	if status.MigrationInfo.MigrationStatus != "success" || status.MigrationInfo.SourceMount != from+"/" || status.MigrationInfo.TargetMount != to+"/" {
		t.Fatalf("RemountStatus: %+v", status.MigrationInfo)
	}
	got, err := c.KVv2(to).Get(t.Context(), "app")
	h.Must(t, "KVv2 Get after the move", err)
	if got.Data["k"] != "v" {
		t.Fatalf("moved data: %v", got.Data)
	}
	// Remount polls the status until it is terminal: the first answer is.
	done := make(chan error, 1)
	go func() { done <- c.Sys().Remount(to, from) }()
	select {
	case err := <-done:
		h.Must(t, "Remount", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Remount did not finish at the first status read")
	}
	auth := h.Name("go-move-jwt")
	h.Must(t, "EnableAuthWithOptions", c.Sys().EnableAuthWithOptions(auth, &vault.EnableAuthOptions{Type: "jwt"}))
	h.Must(t, "Remount auth", c.Sys().Remount("auth/"+auth, "auth/"+auth+"-moved"))
	auths, err := c.Sys().ListAuth()
	h.Must(t, "ListAuth", err)
	if auths[auth+"-moved/"] == nil || auths[auth+"/"] != nil {
		t.Fatalf("auth mounts after the move: %v", auths)
	}
	for _, bad := range [][2]string{{"sys", "system"}, {"auth/" + auth + "-moved", "elsewhere"}, {from, "pki"}} {
		if _, err := c.Sys().StartRemount(bad[0], bad[1]); h.StatusOf(err) != 400 {
			t.Fatalf("StartRemount %v: %v", bad, err)
		}
	}
}

func TestTokenDisplayNameAndTimes(t *testing.T) {
	c := h.Client(t)
	created, err := c.Auth().Token().Create(&vault.TokenCreateRequest{DisplayName: "My-Token---Name", TTL: "1h"})
	h.Must(t, "Token create", err)
	looked, err := c.Auth().Token().Lookup(created.Auth.ClientToken)
	h.Must(t, "Token lookup", err)
	if looked.Data["display_name"] != "token-My-Token---Name" {
		t.Fatalf("display_name: %v", looked.Data["display_name"])
	}
	// As the Terraform provider's vault_token reads its lease_duration.
	issue, err1 := time.Parse(time.RFC3339Nano, looked.Data["issue_time"].(string))
	expire, err2 := time.Parse(time.RFC3339Nano, looked.Data["expire_time"].(string))
	if err1 != nil || err2 != nil || int(expire.Sub(issue).Seconds()) != 3600 {
		t.Fatalf("issue_time %v, expire_time %v", looked.Data["issue_time"], looked.Data["expire_time"])
	}
}
