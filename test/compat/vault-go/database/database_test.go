// Package database drives Hangar's database engine with the official Go client, unchanged, against
// a real PostgreSQL and MariaDB; psql and mysql judge the logins.
// Environment: VAULT_ADDR, VAULT_TOKEN, PG_URL_TEMPLATE, PG_HOST, PG_PORT, PG_ADMIN_USER,
// PG_ADMIN_PASSWORD, MYSQL_DSN_TEMPLATE, MYSQL_HOST, MYSQL_PORT, MYSQL_ADMIN_USER, MYSQL_ADMIN_PASSWORD.
package database

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	"hangar.test/compat/vaultgo/hangartest"
)

const mount = "database-go"

// psql runs SQL as a user; the error is nil when the login and the SQL succeeded.
func psql(t *testing.T, user, password, sql string) (string, error) {
	cmd := exec.Command("psql", "-h", hangartest.Env(t, "PG_HOST"), "-p", hangartest.Env(t, "PG_PORT"), "-U", user, "-d", "app", "-w", "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mysql(t *testing.T, user, password, sql string) (string, error) {
	cmd := exec.Command("mysql", "--no-defaults", "-h", hangartest.Env(t, "MYSQL_HOST"), "-P", hangartest.Env(t, "MYSQL_PORT"), "-u", user, "--batch", "--skip-column-names", "-e", sql)
	cmd.Env = append(os.Environ(), "MYSQL_PWD="+password)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestDatabaseEngine(t *testing.T) {
	c := hangartest.Client(t)
	logical := c.Logical()
	must(t, c.Sys().Mount(mount, &vault.MountInput{Type: "database"}))

	pgConfig := map[string]interface{}{
		"plugin_name": "postgresql-database-plugin", "connection_url": hangartest.Env(t, "PG_URL_TEMPLATE"),
		"username": hangartest.Env(t, "PG_ADMIN_USER"), "password": "wrong", "allowed_roles": []string{"ro", "static-go"},
	}
	if _, err := logical.Write(mount+"/config/pg", pgConfig); err == nil || !strings.Contains(err.Error(), "could not verify the connection") {
		t.Fatalf("a wrong password must fail verification, got %v", err)
	}
	pgConfig["password"] = hangartest.Env(t, "PG_ADMIN_PASSWORD")
	_, err := logical.Write(mount+"/config/pg", pgConfig)
	must(t, err)
	read, err := logical.Read(mount + "/config/pg")
	must(t, err)
	details := read.Data["connection_details"].(map[string]interface{})
	if read.Data["plugin_name"] != "postgresql-database-plugin" || details["username"] != hangartest.Env(t, "PG_ADMIN_USER") || details["password"] != nil {
		t.Fatalf("config read: %v", read.Data)
	}
	// connection_details: only what was sent (Vault's), no pool defaults.
	if _, ok := details["max_idle_connections"]; ok || len(details) != 2 {
		t.Fatalf("connection_details: %v", details)
	}
	list, err := logical.List(mount + "/config")
	must(t, err)
	if keys := list.Data["keys"].([]interface{}); len(keys) != 1 || keys[0] != "pg" {
		t.Fatalf("config list: %v", list.Data)
	}

	t.Run("dynamic credentials", func(t *testing.T) {
		_, err := logical.Write(mount+"/roles/ro", map[string]interface{}{
			"db_name":             "pg",
			"creation_statements": []string{`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'; GRANT SELECT ON items TO "{{name}}";`},
			"default_ttl":         "1h", "max_ttl": "2h",
		})
		must(t, err)
		role, err := logical.Read(mount + "/roles/ro")
		must(t, err)
		if ttl, _ := role.Data["default_ttl"].(json.Number).Int64(); ttl != 3600 {
			t.Fatalf("role read: %v", role.Data)
		}
		secret, err := logical.Read(mount + "/creds/ro")
		must(t, err)
		if secret.LeaseID == "" || secret.LeaseDuration != 3600 || !secret.Renewable {
			t.Fatalf("creds lease: %+v", secret)
		}
		user, password := secret.Data["username"].(string), secret.Data["password"].(string)
		if out, err := psql(t, user, password, "SELECT count(*) FROM items"); err != nil || out != "2" {
			t.Fatalf("psql with dynamic credentials: %v %s", err, out)
		}
		renewed, err := c.Sys().Renew(secret.LeaseID, 600)
		must(t, err)
		if renewed.LeaseDuration != 600 {
			t.Fatalf("renew: %+v", renewed)
		}
		must(t, c.Sys().Revoke(secret.LeaseID))
		if _, err := psql(t, user, password, "SELECT 1"); err == nil {
			t.Fatal("a revoked user still logs in")
		}
	})

	t.Run("static role", func(t *testing.T) {
		if out, err := psql(t, hangartest.Env(t, "PG_ADMIN_USER"), hangartest.Env(t, "PG_ADMIN_PASSWORD"), "DROP ROLE IF EXISTS static_go; CREATE ROLE static_go LOGIN PASSWORD 'initial'"); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		_, err := logical.Write(mount+"/static-roles/static-go", map[string]interface{}{"db_name": "pg", "username": "static_go", "rotation_period": "1h"})
		must(t, err)
		creds, err := logical.Read(mount + "/static-creds/static-go")
		must(t, err)
		period, _ := creds.Data["rotation_period"].(json.Number).Int64()
		ttl, _ := creds.Data["ttl"].(json.Number).Int64()
		if creds.Data["username"] != "static_go" || period != 3600 || ttl <= 0 || ttl > 3600 || creds.Data["last_vault_rotation"] == "" {
			t.Fatalf("static creds: %v", creds.Data)
		}
		first := creds.Data["password"].(string)
		if _, err := psql(t, "static_go", first, "SELECT 1"); err != nil {
			t.Fatalf("static password: %v", err)
		}
		_, err = logical.Write(mount+"/rotate-role/static-go", nil)
		must(t, err)
		again, err := logical.Read(mount + "/static-creds/static-go")
		must(t, err)
		second := again.Data["password"].(string)
		if second == first {
			t.Fatal("rotate-role kept the password")
		}
		if _, err := psql(t, "static_go", first, "SELECT 1"); err == nil {
			t.Fatal("the old static password still works")
		}
		if _, err := psql(t, "static_go", second, "SELECT 1"); err != nil {
			t.Fatalf("new static password: %v", err)
		}
		_, err = logical.Delete(mount + "/static-roles/static-go")
		must(t, err)
	})

	t.Run("password policy", func(t *testing.T) {
		_, err := logical.Write("sys/policies/password/go-digits", map[string]interface{}{"policy": "length = 24\nrule \"charset\" {\n  charset = \"0123456789\"\n}\n"})
		must(t, err)
		generated, err := logical.Read("sys/policies/password/go-digits/generate")
		must(t, err)
		if pw := generated.Data["password"].(string); len(pw) != 24 || strings.Trim(pw, "0123456789") != "" {
			t.Fatalf("generated: %q", pw)
		}
	})

	t.Run("MariaDB and rotate-root", func(t *testing.T) {
		admin, adminPassword := hangartest.Env(t, "MYSQL_ADMIN_USER"), hangartest.Env(t, "MYSQL_ADMIN_PASSWORD")
		if out, err := mysql(t, admin, adminPassword, "CREATE USER IF NOT EXISTS 'root_go'@'%' IDENTIFIED BY 'root-go-initial'; GRANT ALL PRIVILEGES ON *.* TO 'root_go'@'%' WITH GRANT OPTION"); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		_, err := logical.Write(mount+"/config/my", map[string]interface{}{
			"plugin_name": "mysql-database-plugin", "connection_url": hangartest.Env(t, "MYSQL_DSN_TEMPLATE"),
			"username": "root_go", "password": "root-go-initial", "allowed_roles": "*",
		})
		must(t, err)
		_, err = logical.Write(mount+"/rotate-root/my", nil)
		must(t, err)
		if _, err := mysql(t, "root_go", "root-go-initial", "SELECT 1"); err == nil {
			t.Fatal("the old root password still works")
		}
		_, err = logical.Write(mount+"/roles/my-ro", map[string]interface{}{
			"db_name": "my", "creation_statements": []string{"CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'; GRANT SELECT ON app.* TO '{{name}}'@'%';"},
		})
		must(t, err)
		secret, err := logical.Read(mount + "/creds/my-ro")
		must(t, err)
		user, password := secret.Data["username"].(string), secret.Data["password"].(string)
		if out, err := mysql(t, user, password, "SHOW GRANTS"); err != nil || !strings.Contains(out, "GRANT SELECT ON `app`.*") {
			t.Fatalf("mysql with dynamic credentials: %v %s", err, out)
		}
		must(t, c.Sys().Revoke(secret.LeaseID))
		if _, err := mysql(t, user, password, "SELECT 1"); err == nil {
			t.Fatal("a revoked MariaDB user still logs in")
		}
	})

	t.Run("bad input is a 400 naming the field", func(t *testing.T) {
		_, err := logical.Write(mount+"/static-roles/static-go", map[string]interface{}{"db_name": "pg", "username": "static_go", "rotation_period": 2})
		if respErr, ok := err.(*vault.ResponseError); !ok || respErr.StatusCode != 400 || !strings.Contains(err.Error(), "rotation_period") {
			t.Fatalf("got %v", err)
		}
		_, err = logical.Read(mount + "/creds/nope")
		if respErr, ok := err.(*vault.ResponseError); !ok || respErr.StatusCode != 400 {
			t.Fatalf("got %v", err)
		}
	})
}
