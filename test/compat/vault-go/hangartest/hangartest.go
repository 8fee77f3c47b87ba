// Package hangartest gives the compatibility suites a vault/api client for the Hangar that the jest
// runner started (VAULT_ADDR, VAULT_TOKEN), and small helpers the engine packages share.
package hangartest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	vault "github.com/hashicorp/vault/api"
)

// Client is a vault/api client for the server under test, authenticated with its root token.
func Client(t *testing.T) *vault.Client {
	t.Helper()
	addr, token := os.Getenv("VAULT_ADDR"), os.Getenv("VAULT_TOKEN")
	if addr == "" || token == "" {
		t.Fatal("VAULT_ADDR and VAULT_TOKEN must name the Hangar under test (the jest runner sets them)")
	}
	config := vault.DefaultConfig()
	config.Address = addr
	config.MaxRetries = 0
	client, err := vault.NewClient(config)
	if err != nil {
		t.Fatalf("vault.NewClient: %v", err)
	}
	client.SetToken(token)
	return client
}

// WithToken is a copy of a client that presents another token.
func WithToken(t *testing.T, client *vault.Client, token string) *vault.Client {
	t.Helper()
	c, err := client.Clone()
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	c.SetToken(token)
	return c
}

// Name is a unique name with a prefix, so that tests never collide on one server.
func Name(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// Must fails the test on an error, naming the call.
func Must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// StatusOf is the HTTP status of an error from vault/api (0 when it is not a response error).
func StatusOf(err error) int {
	var re *vault.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// Env is a required environment variable (set by the jest runner); the test fails when it is unset.
func Env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set", name)
	}
	return v
}

// Write is Logical().Write that fails the test on an error, naming the path.
func Write(t *testing.T, c *vault.Client, path string, data map[string]interface{}) *vault.Secret {
	t.Helper()
	s, err := c.Logical().Write(path, data)
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return s
}
