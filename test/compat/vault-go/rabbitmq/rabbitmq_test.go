// Package rabbitmq drives Hangar's message broker engine with the official Go client, unchanged,
// against a real RabbitMQ whose management API the test also calls to judge the issued users.
// Environment: VAULT_ADDR, VAULT_TOKEN, RABBITMQ_MGMT_URL, RABBITMQ_ADMIN_USER, RABBITMQ_ADMIN_PASSWORD.
package rabbitmq

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	"hangar.test/compat/vaultgo/hangartest"
)

// managementStatus is the status of a management API GET with the given credentials.
func managementStatus(t *testing.T, path, user, password string) (int, map[string]interface{}) {
	req, _ := http.NewRequest("GET", hangartest.Env(t, "RABBITMQ_MGMT_URL")+"/api/"+path, nil)
	req.SetBasicAuth(user, password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]interface{}
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func TestRabbitmqEngine(t *testing.T) {
	c := hangartest.Client(t)
	logical := c.Logical()
	admin, adminPassword := hangartest.Env(t, "RABBITMQ_ADMIN_USER"), hangartest.Env(t, "RABBITMQ_ADMIN_PASSWORD")

	if err := c.Sys().Mount("rabbitmq-go", &vault.MountInput{Type: "rabbitmq"}); err != nil {
		t.Fatal(err)
	}
	if _, err := logical.Write("rabbitmq-go/config/connection", map[string]interface{}{
		"connection_uri": hangartest.Env(t, "RABBITMQ_MGMT_URL"), "username": admin, "password": "wrong", "verify_connection": true,
	}); err == nil || !strings.Contains(err.Error(), "failed to validate the connection") {
		t.Fatalf("a wrong password must fail verification, got %v", err)
	}
	if _, err := logical.Write("rabbitmq-go/config/connection", map[string]interface{}{
		"connection_uri": hangartest.Env(t, "RABBITMQ_MGMT_URL"), "username": admin, "password": adminPassword,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := logical.Write("rabbitmq-go/config/lease", map[string]interface{}{"ttl": "1h", "max_ttl": 7200}); err != nil {
		t.Fatal(err)
	}
	lease, err := logical.Read("rabbitmq-go/config/lease")
	if err != nil || lease.Data["ttl"].(json.Number).String() != "3600" || lease.Data["max_ttl"].(json.Number).String() != "7200" {
		t.Fatalf("config/lease: %v %v", lease, err)
	}

	vhosts := `{"/": {"configure": ".*", "write": ".*", "read": ".*"}}`
	topics := `{"/": {"amq.topic": {"write": "^go\\.", "read": ".*"}}}`
	if _, err := logical.Write("rabbitmq-go/roles/go", map[string]interface{}{"tags": "management", "vhosts": vhosts, "vhost_topics": topics}); err != nil {
		t.Fatal(err)
	}
	if _, err := logical.Write("rabbitmq-go/roles/broken", map[string]interface{}{"vhosts": "{not json"}); err == nil {
		t.Fatal("malformed vhosts JSON must be refused")
	} else if re, ok := err.(*vault.ResponseError); !ok || re.StatusCode != 400 || !strings.Contains(strings.Join(re.Errors, " "), "vhosts") {
		t.Fatalf("malformed vhosts: %v", err)
	}
	role, err := logical.Read("rabbitmq-go/roles/go")
	if err != nil || role.Data["tags"] != "management" {
		t.Fatalf("read role: %v %v", role, err)
	}
	if perm := role.Data["vhosts"].(map[string]interface{})["/"].(map[string]interface{}); perm["write"] != ".*" {
		t.Fatalf("role vhosts: %v", role.Data["vhosts"])
	}
	list, err := logical.List("rabbitmq-go/roles")
	if err != nil || len(list.Data["keys"].([]interface{})) != 1 {
		t.Fatalf("list roles: %v %v", list, err)
	}

	creds, err := logical.Read("rabbitmq-go/creds/go")
	if err != nil {
		t.Fatal(err)
	}
	if creds.LeaseID == "" || !creds.Renewable || creds.LeaseDuration != 3600 {
		t.Fatalf("creds lease: %+v", creds)
	}
	user, password := creds.Data["username"].(string), creds.Data["password"].(string)
	if status, body := managementStatus(t, "whoami", user, password); status != 200 || body["name"] != user {
		t.Fatalf("issued user cannot log in: %d %v", status, body)
	}
	if status, body := managementStatus(t, "users/"+url.PathEscape(user), admin, adminPassword); status != 200 || body["tags"].([]interface{})[0] != "management" {
		t.Fatalf("issued user's tags: %d %v", status, body)
	}

	renewed, err := c.Sys().Renew(creds.LeaseID, 60)
	if err != nil || renewed.LeaseDuration != 60 {
		t.Fatalf("renew: %+v %v", renewed, err)
	}
	if err := c.Sys().Revoke(creds.LeaseID); err != nil {
		t.Fatal(err)
	}
	if status, _ := managementStatus(t, "whoami", user, password); status != 401 {
		t.Fatalf("a revoked user still logs in: %d", status)
	}
	if _, err := logical.Delete("rabbitmq-go/roles/go"); err != nil {
		t.Fatal(err)
	}
	if gone, err := logical.Read("rabbitmq-go/roles/go"); err != nil || gone != nil {
		t.Fatalf("deleted role still read: %v %v", gone, err)
	}
	if _, err := logical.Read("rabbitmq-go/creds/go"); err == nil || !strings.Contains(err.Error(), "unknown role") {
		t.Fatalf("creds of a deleted role: %v", err)
	}
}
