// Package ldap drives Hangar's ldap secrets engine with the official Go client, unchanged,
// against a private OpenLDAP; `ldapwhoami` judges every password the engine hands out.
// Environment: VAULT_ADDR, VAULT_TOKEN, LDAP_URL, LDAP_BINDDN, LDAP_BINDPASS, LDAP_USERDN,
// ACCOUNT_PREFIX (accounts <prefix>-role, <prefix>-lib1, <prefix>-lib2 exist under LDAP_USERDN).
package ldap

import (
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

func TestLdapEngine(t *testing.T) {
	c, err := vault.NewClient(vault.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken(env(t, "VAULT_TOKEN"))
	logical := c.Logical()
	prefix, people := env(t, "ACCOUNT_PREFIX"), env(t, "LDAP_USERDN")
	dnOf := func(uid string) string { return "uid=" + uid + "," + people }

	// The public service's older name for the engine mounts the same engine.
	if err := c.Sys().Mount("ldap-go", &vault.MountInput{Type: "openldap"}); err != nil {
		t.Fatal(err)
	}
	if _, err := logical.Write("ldap-go/config", map[string]interface{}{
		"url": env(t, "LDAP_URL"), "binddn": env(t, "LDAP_BINDDN"), "bindpass": env(t, "LDAP_BINDPASS"),
		"userdn": people, "userattr": "uid", "password_policy": "",
	}); err != nil {
		t.Fatal(err)
	}
	cfg, err := logical.Read("ldap-go/config")
	if err != nil || cfg == nil {
		t.Fatalf("read config: %v", err)
	}
	if _, shown := cfg.Data["bindpass"]; shown || cfg.Data["schema"] != "openldap" || cfg.Data["userattr"] != "uid" {
		t.Fatalf("config read: %v", cfg.Data)
	}

	// A static role: rotated when created, and again on rotate-role.
	account := prefix + "-role"
	if _, err := logical.Write("ldap-go/static-role/org/app", map[string]interface{}{"username": account, "rotation_period": "24h"}); err != nil {
		t.Fatal(err)
	}
	if list, err := logical.List("ldap-go/static-role"); err != nil || list.Data["keys"].([]interface{})[0] != "org/" {
		t.Fatalf("list static roles: %v %v", list, err)
	}
	cred, err := logical.Read("ldap-go/static-cred/org/app")
	if err != nil {
		t.Fatal(err)
	}
	first := cred.Data["password"].(string)
	if cred.Data["username"] != account || !canBind(t, dnOf(account), first) || canBind(t, dnOf(account), "initial-"+account) {
		t.Fatalf("static creds: %v", cred.Data)
	}
	if _, err := logical.Write("ldap-go/rotate-role/org/app", nil); err != nil {
		t.Fatal(err)
	}
	cred, _ = logical.Read("ldap-go/static-cred/org/app")
	if cred.Data["last_password"] != first || !canBind(t, dnOf(account), cred.Data["password"].(string)) || canBind(t, dnOf(account), first) {
		t.Fatalf("rotated static creds: %v", cred.Data)
	}

	// A dynamic role: its credentials are an entry that binds until the lease is revoked.
	if _, err := logical.Write("ldap-go/role/dyn", map[string]interface{}{
		"creation_ldif":     "dn: uid={{.Username}}," + people + "\nobjectClass: inetOrgPerson\nuid: {{.Username}}\ncn: {{.Username}}\nsn: go\nuserPassword: {{.Password}}\n",
		"deletion_ldif":     "dn: uid={{.Username}}," + people + "\nchangetype: delete\n",
		"username_template": "go_{{random 8 | lowercase}}",
		"default_ttl":       "1h",
	}); err != nil {
		t.Fatal(err)
	}
	creds, err := logical.Read("ldap-go/creds/dyn")
	if err != nil {
		t.Fatal(err)
	}
	user, password := creds.Data["username"].(string), creds.Data["password"].(string)
	if creds.LeaseID == "" || creds.LeaseDuration != 3600 || !canBind(t, dnOf(user), password) {
		t.Fatalf("dynamic creds: %+v", creds)
	}
	if err := c.Sys().Revoke(creds.LeaseID); err != nil {
		t.Fatal(err)
	}
	if canBind(t, dnOf(user), password) {
		t.Fatal("a revoked dynamic credential still binds")
	}

	// A library set: check-out under a lease, check-in with a new password.
	if _, err := logical.Write("ldap-go/library/team", map[string]interface{}{
		"service_account_names": []string{prefix + "-lib1", prefix + "-lib2"}, "ttl": "1h",
	}); err != nil {
		t.Fatal(err)
	}
	out, err := logical.Write("ldap-go/library/team/check-out", nil)
	if err != nil {
		t.Fatal(err)
	}
	name, lent := out.Data["service_account_name"].(string), out.Data["password"].(string)
	if out.LeaseID == "" || !out.Renewable || !canBind(t, dnOf(name), lent) {
		t.Fatalf("check-out: %+v", out)
	}
	in, err := logical.Write("ldap-go/library/team/check-in", nil)
	if err != nil || in.Data["check_ins"].([]interface{})[0] != name || canBind(t, dnOf(name), lent) {
		t.Fatalf("check-in: %v %v", in, err)
	}

	// rotate-root: the bind password becomes one only the engine knows.
	if _, err := logical.Write("ldap-go/rotate-root", nil); err != nil {
		t.Fatal(err)
	}
	if canBind(t, env(t, "LDAP_BINDDN"), env(t, "LDAP_BINDPASS")) {
		t.Fatal("the old bind password still binds")
	}
	if _, err := logical.Delete("ldap-go/library/team"); err != nil {
		t.Fatal(err)
	}
}
