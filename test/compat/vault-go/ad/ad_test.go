// Package ad drives Hangar's directory accounts engine with the official Go client, unchanged,
// against a private OpenLDAP; `ldapwhoami` judges every password the engine hands out.
// Environment: VAULT_ADDR, VAULT_TOKEN, LDAP_URL, LDAP_BINDDN, LDAP_BINDPASS, LDAP_USERDN,
// ACCOUNT_PREFIX (accounts <prefix>-role, <prefix>-lib1, <prefix>-lib2 exist under LDAP_USERDN).
package ad

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"testing"

	vault "github.com/hashicorp/vault/api"
)

func env(t *testing.T, name string) string {
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set", name)
	}
	return v
}

// canBind reports whether ldapwhoami binds as dn with password.
func canBind(t *testing.T, dn, password string) bool {
	return exec.Command("ldapwhoami", "-x", "-H", env(t, "LDAP_URL"), "-D", dn, "-w", password).Run() == nil
}

func TestAdEngine(t *testing.T) {
	c, err := vault.NewClient(vault.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken(env(t, "VAULT_TOKEN"))
	logical := c.Logical()
	prefix, people := env(t, "ACCOUNT_PREFIX"), env(t, "LDAP_USERDN")
	dnOf := func(uid string) string { return "uid=" + uid + "," + people }

	if err := c.Sys().Mount("ad-go", &vault.MountInput{Type: "ad"}); err != nil {
		t.Fatal(err)
	}
	if _, err := logical.Write("ad-go/config", map[string]interface{}{
		"url": env(t, "LDAP_URL"), "binddn": env(t, "LDAP_BINDDN"), "bindpass": env(t, "LDAP_BINDPASS"),
		"userdn": people, "schema": "openldap", "length": 20, "ttl": "1h",
	}); err != nil {
		t.Fatal(err)
	}
	cfg, err := logical.Read("ad-go/config")
	if err != nil || cfg == nil {
		t.Fatalf("read config: %v", err)
	}
	if _, shown := cfg.Data["bindpass"]; shown || cfg.Data["binddn"] != env(t, "LDAP_BINDDN") {
		t.Fatalf("config read: %v", cfg.Data)
	}

	// A role and its lazily rotated credentials.
	role := prefix + "-role"
	if _, err := logical.Write("ad-go/roles/app", map[string]interface{}{"service_account_name": "nobody"}); err == nil {
		t.Fatal("a role on a missing account must be refused")
	}
	if _, err := logical.Write("ad-go/roles/app", map[string]interface{}{"service_account_name": role, "ttl": 1800}); err != nil {
		t.Fatal(err)
	}
	roles, err := logical.List("ad-go/roles")
	if err != nil || roles == nil || len(roles.Data["keys"].([]interface{})) != 1 {
		t.Fatalf("list roles: %v %v", roles, err)
	}
	read, err := logical.Read("ad-go/roles/app")
	if err != nil || read.Data["service_account_name"] != role {
		t.Fatalf("read role: %v %v", read, err)
	}
	creds, err := logical.Read("ad-go/creds/app")
	if err != nil {
		t.Fatal(err)
	}
	current := creds.Data["current_password"].(string)
	if creds.Data["username"] != role || len(current) != 20 || !canBind(t, dnOf(role), current) {
		t.Fatalf("creds: %v", creds.Data)
	}
	if canBind(t, dnOf(role), "initial-"+role) {
		t.Fatal("the first password still binds")
	}
	again, _ := logical.Read("ad-go/creds/app")
	if again.Data["current_password"] != current {
		t.Fatal("creds rotated before ttl")
	}

	// The library: check-out under a lease, status, renewal, check-in, revocation.
	lib1, lib2 := prefix+"-lib1", prefix+"-lib2"
	if _, err := logical.Write("ad-go/library/team", map[string]interface{}{
		"service_account_names": []string{lib1, lib2}, "ttl": "1h", "max_ttl": "2h",
	}); err != nil {
		t.Fatal(err)
	}
	set, err := logical.Read("ad-go/library/team")
	if err != nil || set.Data["disable_check_in_enforcement"] != false {
		t.Fatalf("read set: %v %v", set, err)
	}
	out, err := logical.Write("ad-go/library/team/check-out", map[string]interface{}{"ttl": "3h"})
	if err != nil {
		t.Fatal(err)
	}
	if out.LeaseID == "" || out.LeaseDuration != 3600 || !out.Renewable {
		t.Fatalf("check-out lease: %+v", out)
	}
	name, password := out.Data["service_account_name"].(string), out.Data["password"].(string)
	if !canBind(t, dnOf(name), password) {
		t.Fatal("the checked-out password does not bind")
	}
	status, err := logical.Read("ad-go/library/team/status")
	if err != nil || status.Data[name].(map[string]interface{})["available"] != false {
		t.Fatalf("status: %v %v", status, err)
	}
	if renewed, err := c.Sys().Renew(out.LeaseID, 600); err != nil || renewed.LeaseDuration != 600 {
		t.Fatalf("renew: %v %v", renewed, err)
	}
	second, err := logical.Write("ad-go/library/team/check-out", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = logical.Write("ad-go/library/team/check-out", nil)
	var re *vault.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Fatalf("a check-out with none available must be a 400, got %v", err)
	}
	in, err := logical.Write("ad-go/library/team/check-in", map[string]interface{}{"service_account_names": name})
	if err != nil || len(in.Data["check_ins"].([]interface{})) != 1 {
		t.Fatalf("check-in: %v %v", in, err)
	}
	if canBind(t, dnOf(name), password) {
		t.Fatal("the checked-in password still binds")
	}
	// Revoking the other lease checks its account in and rotates it.
	if err := c.Sys().Revoke(second.LeaseID); err != nil {
		t.Fatal(err)
	}
	other := second.Data["service_account_name"].(string)
	if canBind(t, dnOf(other), second.Data["password"].(string)) {
		t.Fatal("the revoked check-out's password still binds")
	}
	status, _ = logical.Read("ad-go/library/team/status")
	for _, n := range []string{lib1, lib2} {
		if status.Data[n].(map[string]interface{})["available"] != true {
			t.Fatalf("%s not available after check-in: %v", n, status.Data)
		}
	}
	third, _ := logical.Write("ad-go/library/team/check-out", nil)
	forced, err := logical.Write("ad-go/library/manage/team/check-in", map[string]interface{}{"service_account_names": []string{third.Data["service_account_name"].(string)}})
	if err != nil || len(forced.Data["check_ins"].([]interface{})) != 1 {
		t.Fatalf("manage check-in: %v %v", forced, err)
	}
	sets, err := logical.List("ad-go/library")
	if err != nil || sets.Data["keys"].([]interface{})[0] != "team" {
		t.Fatalf("list sets: %v %v", sets, err)
	}

	// rotate-root: GET answers 204 (no secret); the old bind password is dead; the engine still works.
	if secret, err := logical.Read("ad-go/rotate-root"); err != nil || secret != nil {
		t.Fatalf("rotate-root: %v %v", secret, err)
	}
	if canBind(t, env(t, "LDAP_BINDDN"), env(t, "LDAP_BINDPASS")) {
		t.Fatal("the old bind password still binds")
	}
	if _, err := logical.Write("ad-go/library/team/check-out", nil); err != nil {
		t.Fatalf("check-out after rotate-root: %v", err)
	}
	// A set with a checked-out account cannot be deleted; checked in (the caller's one, unnamed), it can.
	if _, err := logical.Delete("ad-go/library/team"); err == nil {
		t.Fatal("deleting a set with a checked-out account must be refused")
	}
	if in, err := logical.Write("ad-go/library/team/check-in", nil); err != nil || len(in.Data["check_ins"].([]interface{})) != 1 {
		t.Fatalf("check-in without names: %v %v", in, err)
	}

	for _, p := range []string{"ad-go/roles/app", "ad-go/library/team", "ad-go/config"} {
		if _, err := logical.Delete(p); err != nil {
			t.Fatal(err)
		}
	}
	if gone, err := logical.Read("ad-go/roles/app"); err != nil || gone != nil {
		t.Fatalf("deleted role still reads: %v %v", gone, err)
	}
}
