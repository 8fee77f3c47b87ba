// Package transit drives Hangar's transit engine with the official Go client, unchanged: keys,
// encrypt/decrypt (single and batch), rotate, rewrap, data keys, sign/verify (also prehashed), HMAC.
// Environment: VAULT_ADDR, VAULT_TOKEN.
package transit

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"

	"hangar.test/compat/vaultgo/hangartest"
)

func write(t *testing.T, c *vault.Client, path string, data map[string]interface{}) map[string]interface{} {
	t.Helper()
	s, err := c.Logical().Write(path, data)
	hangartest.Must(t, path, err)
	if s == nil {
		return nil
	}
	return s.Data
}

func TestTransitEngine(t *testing.T) {
	c := hangartest.Client(t)
	mount := hangartest.Name("transit-go")
	hangartest.Must(t, "mount", c.Sys().Mount(mount, &vault.MountInput{Type: "transit"}))
	defer func() { _ = c.Sys().Unmount(mount) }()

	plain := base64.StdEncoding.EncodeToString([]byte("hello"))
	write(t, c, mount+"/keys/app", map[string]interface{}{"type": "chacha20-poly1305"})
	ct := write(t, c, mount+"/encrypt/app", map[string]interface{}{"plaintext": plain})["ciphertext"].(string)
	if got := write(t, c, mount+"/decrypt/app", map[string]interface{}{"ciphertext": ct})["plaintext"]; got != plain {
		t.Fatalf("decrypt: %v", got)
	}
	write(t, c, mount+"/keys/app/rotate", nil)
	if re := write(t, c, mount+"/rewrap/app", map[string]interface{}{"ciphertext": ct})["ciphertext"].(string); !strings.HasPrefix(re, "vault:v2:") {
		t.Fatalf("rewrap: %s", re)
	}
	batch := write(t, c, mount+"/encrypt/app", map[string]interface{}{"batch_input": []map[string]interface{}{{"plaintext": plain}, {"plaintext": plain}}})
	if n := len(batch["batch_results"].([]interface{})); n != 2 {
		t.Fatalf("batch: %d", n)
	}
	key, err := c.Logical().Read(mount + "/keys/app")
	hangartest.Must(t, "read key", err)
	if key.Data["latest_version"].(interface{ String() string }).String() != "2" {
		t.Fatalf("key: %#v", key.Data)
	}
	_, err = c.Logical().Write(mount+"/decrypt/app", map[string]interface{}{"ciphertext": "vault:v1:AAAA"})
	if hangartest.StatusOf(err) != 400 {
		t.Fatalf("bad ciphertext: %v", err)
	}

	write(t, c, mount+"/keys/signer", map[string]interface{}{"type": "ed25519"})
	sig := write(t, c, mount+"/sign/signer", map[string]interface{}{"input": plain})["signature"]
	if ok := write(t, c, mount+"/verify/signer", map[string]interface{}{"input": plain, "signature": sig})["valid"]; ok != true {
		t.Fatalf("verify: %v", ok)
	}
	// prehashed: an RSA-PSS signature over the caller's SHA-256 digest verifies on the message.
	write(t, c, mount+"/keys/rsa", map[string]interface{}{"type": "rsa-2048"})
	sum := sha256.Sum256([]byte("hello"))
	digest := base64.StdEncoding.EncodeToString(sum[:])
	pre := write(t, c, mount+"/sign/rsa/sha2-256", map[string]interface{}{"input": digest, "prehashed": true})["signature"]
	if ok := write(t, c, mount+"/verify/rsa/sha2-256", map[string]interface{}{"input": plain, "signature": pre})["valid"]; ok != true {
		t.Fatalf("verify prehashed: %v", ok)
	}
	_, err = c.Logical().Write(mount+"/sign/rsa", map[string]interface{}{"input": plain, "prehashed": true})
	if hangartest.StatusOf(err) != 400 {
		t.Fatalf("short digest: %v", err)
	}
	mac := write(t, c, mount+"/hmac/signer/sha2-256", map[string]interface{}{"input": plain})["hmac"]
	if ok := write(t, c, mount+"/verify/signer/sha2-256", map[string]interface{}{"input": plain, "hmac": mac})["valid"]; ok != true {
		t.Fatalf("verify hmac: %v", ok)
	}
	dk := write(t, c, mount+"/datakey/plaintext/app", map[string]interface{}{"bits": 128})
	if raw, _ := base64.StdEncoding.DecodeString(dk["plaintext"].(string)); len(raw) != 16 {
		t.Fatalf("datakey: %v", dk)
	}

	// A batch with a bad item: partial_failure_response_code makes the answer a success the client
	// reads, the good item encrypted and the bad one's error in its place.
	partial := write(t, c, mount+"/encrypt/app", map[string]interface{}{
		"partial_failure_response_code": 207,
		"batch_input":                   []map[string]interface{}{{"plaintext": plain}, {"plaintext": "not base64!"}},
	})["batch_results"].([]interface{})
	if ok, bad := partial[0].(map[string]interface{}), partial[1].(map[string]interface{}); ok["ciphertext"] == nil || bad["error"] == nil {
		t.Fatalf("partial batch: %v", partial)
	}
	// sign answers 200 with the error in place.
	signed := write(t, c, mount+"/sign/signer", map[string]interface{}{"batch_input": []map[string]interface{}{{"input": plain}, {"input": "!"}}})["batch_results"].([]interface{})
	if signed[1].(map[string]interface{})["error"] == nil {
		t.Fatalf("sign batch: %v", signed)
	}

	// Convergent encryption: the same plaintext and context give the same ciphertext.
	write(t, c, mount+"/keys/conv", map[string]interface{}{"derived": true, "convergent_encryption": true})
	ctx := base64.StdEncoding.EncodeToString([]byte("tenant"))
	one := write(t, c, mount+"/encrypt/conv", map[string]interface{}{"plaintext": plain, "context": ctx})["ciphertext"]
	two := write(t, c, mount+"/encrypt/conv", map[string]interface{}{"plaintext": plain, "context": ctx})["ciphertext"]
	if one != two {
		t.Fatalf("convergent: %v != %v", one, two)
	}
	if conv, _ := c.Logical().Read(mount + "/keys/conv"); conv.Data["convergent_encryption"] != true {
		t.Fatalf("convergent key: %#v", conv.Data)
	}
	write(t, c, mount+"/cache-config", map[string]interface{}{"size": 100})
	cache, err := c.Logical().Read(mount + "/cache-config")
	hangartest.Must(t, "cache-config", err)
	if cache.Data["size"].(interface{ String() string }).String() != "100" {
		t.Fatalf("cache-config: %#v", cache.Data)
	}
	mk := write(t, c, mount+"/keys/mac", map[string]interface{}{"type": "hmac", "key_size": 64})
	if mk["key_size"].(interface{ String() string }).String() != "64" {
		t.Fatalf("hmac key: %#v", mk)
	}
}
