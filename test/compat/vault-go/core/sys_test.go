package core

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

func TestStatusAndKeyring(t *testing.T) {
	c := h.Client(t)
	health, err := c.Sys().Health()
	h.Must(t, "Health", err)
	if !health.Initialized || health.Sealed || health.Standby || health.Version == "" {
		t.Fatalf("Health: %+v", health)
	}
	seal, err := c.Sys().SealStatus()
	h.Must(t, "SealStatus", err)
	if seal.Sealed || !seal.Initialized || seal.Type == "" {
		t.Fatalf("SealStatus: %+v", seal)
	}
	inited, err := c.Sys().InitStatus()
	h.Must(t, "InitStatus", err)
	if !inited {
		t.Fatal("InitStatus: false")
	}
	leader, err := c.Sys().Leader()
	h.Must(t, "Leader", err)
	if leader.HAEnabled {
		t.Fatalf("Leader: %+v", leader)
	}
	before, err := c.Sys().KeyStatus()
	h.Must(t, "KeyStatus", err)
	if before.Term < 1 || before.InstallTime.IsZero() {
		t.Fatalf("KeyStatus: %+v", before)
	}
	h.Must(t, "Rotate", c.Sys().Rotate())
	after, err := c.Sys().KeyStatus()
	h.Must(t, "KeyStatus", err)
	if after.Term != before.Term+1 {
		t.Fatalf("Rotate: term %d -> %d", before.Term, after.Term)
	}
}

func TestSecretsMounts(t *testing.T) {
	c := h.Client(t)
	path := h.Name("go-kv")
	// The Go client sends every field of MountInput: empty TTL strings, null options, false flags.
	h.Must(t, "Mount", c.Sys().Mount(path, &vault.MountInput{
		Type:        "hangar-test",
		Description: "from vault/api",
		Config:      vault.MountConfigInput{DefaultLeaseTTL: "1h", MaxLeaseTTL: "157680000"},
	}))
	mount, err := c.Sys().GetMount(path)
	h.Must(t, "GetMount", err)
	if mount.Type != "hangar-test" || mount.Description != "from vault/api" || mount.Config.DefaultLeaseTTL != 3600 || mount.Config.MaxLeaseTTL != 157680000 {
		t.Fatalf("GetMount: %+v", mount)
	}
	mounts, err := c.Sys().ListMounts()
	h.Must(t, "ListMounts", err)
	if mounts[path+"/"] == nil || mounts[path+"/"].Accessor != mount.Accessor || mounts["sys/"] == nil {
		t.Fatalf("ListMounts lacks %s/: %v", path, mounts)
	}
	desc := "tuned"
	h.Must(t, "TuneMount", c.Sys().TuneMount(path, vault.MountConfigInput{
		DefaultLeaseTTL:           "2h",
		Description:               &desc,
		ListingVisibility:         "unauth",
		AuditNonHMACRequestKeys:   []string{"name"},
		AuditNonHMACResponseKeys:  []string{"id"},
		PassthroughRequestHeaders: []string{"X-Team"},
		AllowedResponseHeaders:    []string{"X-Served-By"},
	}))
	config, err := c.Sys().MountConfig(path)
	h.Must(t, "MountConfig", err)
	want := vault.MountConfigOutput{
		DefaultLeaseTTL:           7200,
		MaxLeaseTTL:               157680000,
		ListingVisibility:         "unauth",
		AuditNonHMACRequestKeys:   []string{"name"},
		AuditNonHMACResponseKeys:  []string{"id"},
		PassthroughRequestHeaders: []string{"X-Team"},
		AllowedResponseHeaders:    []string{"X-Served-By"},
	}
	if fmt.Sprintf("%+v", *config) != fmt.Sprintf("%+v", want) {
		t.Fatalf("MountConfig:\n got %+v\nwant %+v", *config, want)
	}
	mount, err = c.Sys().GetMount(path)
	h.Must(t, "GetMount", err)
	if mount.Description != "tuned" || mount.Config.ListingVisibility != "unauth" {
		t.Fatalf("GetMount after tune: %+v", mount)
	}
	// Moving into a path in use is refused (TestRemount moves mounts).
	if err := c.Sys().Remount(path, "pki"); h.StatusOf(err) != 400 {
		t.Fatalf("Remount into pki/: %v", err)
	}
	h.Must(t, "Unmount", c.Sys().Unmount(path))
	if _, err := c.Sys().GetMount(path); err == nil {
		t.Fatal("GetMount after Unmount: expected an error")
	}
	if err := c.Sys().Mount(h.Name("go-bad"), &vault.MountInput{Type: "no-such-engine"}); err == nil || !strings.Contains(err.Error(), "plugin not found") {
		t.Fatalf("Mount of an unknown type: %v", err)
	}
}

func TestAuthMounts(t *testing.T) {
	c := h.Client(t)
	path := h.Name("go-jwt")
	h.Must(t, "EnableAuthWithOptions", c.Sys().EnableAuthWithOptions(path, &vault.EnableAuthOptions{
		Type:        "jwt",
		Description: "auth from vault/api",
		Config:      vault.MountConfigInput{DefaultLeaseTTL: "20m", MaxLeaseTTL: "2h", ListingVisibility: "unauth"},
	}))
	auth, err := c.Sys().GetAuth(path)
	h.Must(t, "GetAuth", err)
	if auth.Type != "jwt" || auth.Description != "auth from vault/api" || auth.Config.DefaultLeaseTTL != 1200 || auth.Config.ListingVisibility != "unauth" || auth.Config.TokenType != "default-service" {
		t.Fatalf("GetAuth: %+v", auth)
	}
	list, err := c.Sys().ListAuth()
	h.Must(t, "ListAuth", err)
	if list[path+"/"] == nil || list["token/"] == nil {
		t.Fatalf("ListAuth lacks %s/: %v", path, list)
	}
	// The Terraform provider and the CLI tune auth mounts as auth/<path> under sys/mounts.
	h.Must(t, "TuneMount auth/", c.Sys().TuneMount("auth/"+path, vault.MountConfigInput{MaxLeaseTTL: "43800h", TokenType: "default-batch"}))
	config, err := c.Sys().MountConfig("auth/" + path)
	h.Must(t, "MountConfig auth/", err)
	if config.MaxLeaseTTL != 157680000 || config.DefaultLeaseTTL != 1200 || config.TokenType != "default-batch" || config.ListingVisibility != "unauth" {
		t.Fatalf("MountConfig auth/: %+v", config)
	}
	h.Must(t, "DisableAuth", c.Sys().DisableAuth(path))
	if _, err := c.Sys().GetAuth(path); err == nil {
		t.Fatal("GetAuth after DisableAuth: expected an error")
	}
}

func TestPolicies(t *testing.T) {
	c := h.Client(t)
	name := h.Name("go-policy")
	rules := `path "secret/*" { capabilities = ["read", "list"] }`
	h.Must(t, "PutPolicy", c.Sys().PutPolicy(name, rules))
	got, err := c.Sys().GetPolicy(name)
	h.Must(t, "GetPolicy", err)
	if got != rules {
		t.Fatalf("GetPolicy: %q", got)
	}
	names, err := c.Sys().ListPolicies()
	h.Must(t, "ListPolicies", err)
	if !contains(names, name) || !contains(names, "root") || !contains(names, "default") {
		t.Fatalf("ListPolicies: %v", names)
	}
	h.Must(t, "DeletePolicy", c.Sys().DeletePolicy(name))
	if got, err := c.Sys().GetPolicy(name); err != nil || got != "" {
		t.Fatalf("GetPolicy after delete: %q, %v", got, err)
	}
	if err := c.Sys().PutPolicy(h.Name("go-bad"), `path "x" { capabilities = ["fly"] }`); err == nil {
		t.Fatal("PutPolicy with a bad capability: expected an error")
	}
}

func TestCapabilities(t *testing.T) {
	c := h.Client(t)
	name := h.Name("go-caps")
	h.Must(t, "PutPolicy", c.Sys().PutPolicy(name, `path "team/*" { capabilities = ["read", "update"] }`))
	secret, err := c.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{name}})
	h.Must(t, "Create", err)
	caps, err := c.Sys().CapabilitiesSelf("team/x")
	h.Must(t, "CapabilitiesSelf", err)
	if !reflect.DeepEqual(caps, []string{"root"}) {
		t.Fatalf("CapabilitiesSelf (root): %v", caps)
	}
	caps, err = c.Sys().Capabilities(secret.Auth.ClientToken, "team/x")
	h.Must(t, "Capabilities", err)
	if !reflect.DeepEqual(caps, []string{"read", "update"}) {
		t.Fatalf("Capabilities: %v", caps)
	}
	caps, err = c.Sys().CapabilitiesAccessor(secret.Auth.Accessor, "other/x")
	h.Must(t, "CapabilitiesAccessor", err)
	if !reflect.DeepEqual(caps, []string{"deny"}) {
		t.Fatalf("CapabilitiesAccessor: %v", caps)
	}
	child := h.WithToken(t, c, secret.Auth.ClientToken)
	caps, err = child.Sys().CapabilitiesSelf("team/y")
	h.Must(t, "CapabilitiesSelf (child)", err)
	if !reflect.DeepEqual(caps, []string{"read", "update"}) {
		t.Fatalf("CapabilitiesSelf (child): %v", caps)
	}
}

func TestLogicalAndNulls(t *testing.T) {
	c := h.Client(t)
	path := h.Name("go-logical")
	// Null means "not given": the raw shape of a Go struct with nil maps and pointers.
	_, err := c.Logical().Write("sys/mounts/"+path, map[string]interface{}{"type": "hangar-test", "config": nil, "options": nil, "plugin_name": nil})
	h.Must(t, "Write sys/mounts with nulls", err)
	_, err = c.Logical().Write(path+"/items/a", map[string]interface{}{"value": "one"})
	h.Must(t, "Write", err)
	_, err = c.Logical().WriteWithContext(context.Background(), path+"/items/b", map[string]interface{}{"value": "two"})
	h.Must(t, "WriteWithContext", err)
	read, err := c.Logical().Read(path + "/items/a")
	h.Must(t, "Read", err)
	if read == nil || read.Data["value"] != "one" {
		t.Fatalf("Read: %+v", read)
	}
	list, err := c.Logical().List(path + "/items")
	h.Must(t, "List", err)
	if keys, _ := list.Data["keys"].([]interface{}); len(keys) != 2 {
		t.Fatalf("List: %+v", list.Data)
	}
	withData, err := c.Logical().ReadWithData(path+"/items/b", map[string][]string{"unused": {"1"}})
	h.Must(t, "ReadWithData", err)
	if withData == nil || withData.Data["value"] != "two" {
		t.Fatalf("ReadWithData: %+v", withData)
	}
	_, err = c.Logical().Delete(path + "/items/a")
	h.Must(t, "Delete", err)
	if gone, err := c.Logical().Read(path + "/items/a"); err != nil || gone != nil {
		t.Fatalf("Read after Delete: %+v, %v", gone, err)
	}
	raw, err := c.Logical().ReadRaw(path + "/items/b")
	h.Must(t, "ReadRaw", err)
	raw.Body.Close()
	if raw.StatusCode != 200 {
		t.Fatalf("ReadRaw: %d", raw.StatusCode)
	}
	if _, err := c.Logical().Write(path+"/items/c", map[string]interface{}{"value": 5}); h.StatusOf(err) != 400 || !strings.Contains(err.Error(), "value") {
		t.Fatalf("Write with a bad field: %v", err)
	}
	h.Must(t, "Unmount", c.Sys().Unmount(path))
}

func TestHeaders(t *testing.T) {
	c := h.Client(t)
	// Namespaces: the root namespace is accepted, any other is refused clearly.
	ns, err := c.Clone()
	h.Must(t, "Clone", err)
	ns.SetToken(c.Token())
	ns.SetNamespace("root")
	_, err = ns.Auth().Token().LookupSelf()
	h.Must(t, "LookupSelf in the root namespace", err)
	ns.SetNamespace("team-a")
	if _, err := ns.Auth().Token().LookupSelf(); h.StatusOf(err) != 400 || !strings.Contains(err.Error(), "namespace") {
		t.Fatalf("X-Vault-Namespace team-a: %v", err)
	}
}

// The `vault` CLI's -output-curl-string prints a curl command: run it as printed (`-d` sends the JSON
// as form-urlencoded, the token comes from `$(vault print token)`).
func TestOutputCurlString(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is not on PATH")
		}
		t.Skip("curl is not on PATH")
	}
	c := h.Client(t)
	curlClient, err := c.Clone()
	h.Must(t, "Clone", err)
	curlClient.SetToken(c.Token())
	curlClient.SetOutputCurlString(true)
	name := h.Name("go-curl")
	_, err = curlClient.Logical().Write("sys/policies/acl/"+name, map[string]interface{}{"policy": `path "curl/*" { capabilities = ["read"] }`})
	outErr, ok := err.(*vault.OutputStringError)
	if !ok {
		t.Fatalf("expected an OutputStringError, got %v", err)
	}
	command, err := outErr.CurlString()
	h.Must(t, "CurlString", err)
	script := "vault() { printf '%s' \"$VAULT_TOKEN\"; }\n" + command + " --fail --silent --show-error"
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s\n%s: %v", command, out, err)
	}
	got, err := c.Sys().GetPolicy(name)
	h.Must(t, "GetPolicy", err)
	if !strings.Contains(got, "curl/*") {
		t.Fatalf("policy written by curl: %q", got)
	}
	// A list prints `curl … ?list=true`.
	_, err = curlClient.Logical().List("sys/policies/acl")
	outErr, ok = err.(*vault.OutputStringError)
	if !ok {
		t.Fatalf("expected an OutputStringError, got %v", err)
	}
	command, err = outErr.CurlString()
	h.Must(t, "CurlString", err)
	out, err = exec.Command("sh", "-c", "vault() { printf '%s' \"$VAULT_TOKEN\"; }\n"+command+" --fail --silent --show-error").CombinedOutput()
	if err != nil || !strings.Contains(string(out), name) {
		t.Fatalf("%s\n%s: %v", command, out, err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
