// Package transform drives Hangar's transform engine with the official Go client, unchanged:
// alphabets, templates, the typed and generic transformation endpoints, roles, FPE, masking and
// tokenization encodes and decodes (single and batch), validate, LIST with a filter, errors.
// Environment: VAULT_ADDR, VAULT_TOKEN.
package transform

import (
	"encoding/base64"
	"errors"
	"net/http"
	"regexp"
	"testing"

	vault "github.com/hashicorp/vault/api"
	"hangar.test/compat/vaultgo/hangartest"
)

const mount = "transform-go"

// write writes under the test's mount.
func write(t *testing.T, c *vault.Client, path string, data map[string]interface{}) *vault.Secret {
	t.Helper()
	return hangartest.Write(t, c, mount+"/"+path, data)
}

func str(t *testing.T, s *vault.Secret, key string) string {
	t.Helper()
	if s == nil || s.Data == nil {
		t.Fatalf("no data for %s", key)
	}
	v, ok := s.Data[key].(string)
	if !ok {
		t.Fatalf("%s: not a string in %v", key, s.Data)
	}
	return v
}

func TestTransformEngine(t *testing.T) {
	c := hangartest.Client(t)
	if err := c.Sys().Mount(mount, &vault.MountInput{Type: "transform"}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Sys().Unmount(mount) }()

	write(t, c, "alphabet/digits", map[string]interface{}{"alphabet": "0123456789"})
	write(t, c, "template/ccn", map[string]interface{}{"type": "regex", "pattern": `(\d{4})-(\d{4})-(\d{4})-(\d{4})`, "alphabet": "digits"})
	write(t, c, "transformations/fpe/ccn-fpe", map[string]interface{}{"template": "ccn", "tweak_source": "internal", "allowed_roles": []string{"payments"}})
	write(t, c, "transformation/ccn-mask", map[string]interface{}{"type": "masking", "template": "builtin/creditcardnumber", "masking_character": "#", "allowed_roles": "payments"})
	write(t, c, "transformations/tokenization/ccn-tok", map[string]interface{}{"max_ttl": "24h", "allowed_roles": []string{"payments"}})
	write(t, c, "role/payments", map[string]interface{}{"transformations": []string{"ccn-fpe", "ccn-mask", "ccn-tok"}})

	read, err := c.Logical().Read(mount + "/transformation/ccn-fpe")
	if err != nil || read == nil {
		t.Fatalf("read transformation: %v", err)
	}
	if templates, _ := read.Data["templates"].([]interface{}); len(templates) != 1 || templates[0] != "ccn" || read.Data["type"] != "fpe" || read.Data["tweak_source"] != "internal" {
		t.Fatalf("transformation read: %v", read.Data)
	}
	// A stores list with Vault's default, and the tokenization key's read and rotation.
	tok, err := c.Logical().Read(mount + "/transformation/ccn-tok")
	if stores, _ := tok.Data["stores"].([]interface{}); err != nil || len(stores) != 1 || stores[0] != "builtin/internal" {
		t.Fatalf("tokenization read: %v %v", tok, err)
	}
	write(t, c, "tokenization/keys/ccn-tok/rotate", nil)
	key, err := c.Logical().Read(mount + "/tokenization/keys/ccn-tok")
	if err != nil || key == nil || key.Data["latest_version"].(interface{ String() string }).String() != "2" {
		t.Fatalf("tokenization key: %v %v", key, err)
	}
	if _, leaked := read.Data["key"]; leaked {
		t.Fatal("the transformation key is shown")
	}

	list, err := c.Logical().List(mount + "/transformation")
	if err != nil || list == nil || len(list.Data["keys"].([]interface{})) != 3 {
		t.Fatalf("list transformations: %v %v", list, err)
	}
	filtered, err := c.Logical().ReadWithData(mount+"/transformation", map[string][]string{"list": {"true"}, "filter": {"*-tok"}})
	if err != nil || filtered == nil || len(filtered.Data["keys"].([]interface{})) != 1 {
		t.Fatalf("list with filter: %v %v", filtered, err)
	}

	// FPE keeps the format and decodes back.
	enc := write(t, c, "encode/payments", map[string]interface{}{"value": "1111-2222-3333-4444", "transformation": "ccn-fpe"})
	encoded := str(t, enc, "encoded_value")
	if !regexp.MustCompile(`^\d{4}-\d{4}-\d{4}-\d{4}$`).MatchString(encoded) || encoded == "1111-2222-3333-4444" {
		t.Fatalf("fpe encoded: %q", encoded)
	}
	if dec := write(t, c, "decode/payments", map[string]interface{}{"value": encoded, "transformation": "ccn-fpe"}); str(t, dec, "decoded_value") != "1111-2222-3333-4444" {
		t.Fatalf("fpe decoded: %v", dec.Data)
	}

	// A batch across the three types, one result per item in order.
	batch := write(t, c, "encode/payments", map[string]interface{}{"batch_input": []map[string]interface{}{
		{"value": "1111-2222-3333-4444", "transformation": "ccn-fpe"},
		{"value": "1111-2222-3333-4444", "transformation": "ccn-mask"},
		{"value": "1111-2222-3333-4444", "transformation": "ccn-tok", "ttl": "1h"},
	}})
	results, _ := batch.Data["batch_results"].([]interface{})
	if len(results) != 3 {
		t.Fatalf("batch: %v", batch.Data)
	}
	if results[1].(map[string]interface{})["encoded_value"] != "####-####-####-####" {
		t.Fatalf("masked: %v", results[1])
	}
	token := results[2].(map[string]interface{})["encoded_value"].(string)
	valid := write(t, c, "validate/payments", map[string]interface{}{"value": token, "transformation": "ccn-tok"})
	if valid.Data["valid"] != true {
		t.Fatalf("validate: %v", valid.Data)
	}
	decoded := write(t, c, "decode/payments", map[string]interface{}{"batch_input": []map[string]interface{}{
		{"value": token, "transformation": "ccn-tok"},
		{"value": encoded, "transformation": "ccn-fpe"},
	}})
	for i, r := range decoded.Data["batch_results"].([]interface{}) {
		if r.(map[string]interface{})["decoded_value"] != "1111-2222-3333-4444" {
			t.Fatalf("decode batch %d: %v", i, r)
		}
	}

	// A supplied tweak of the wrong size is refused with the API's error.
	write(t, c, "transformations/fpe/supplied", map[string]interface{}{"template": "builtin/creditcardnumber", "allowed_roles": []string{"payments"}})
	write(t, c, "role/payments", map[string]interface{}{"transformations": []string{"ccn-fpe", "ccn-mask", "ccn-tok", "supplied"}})
	_, err = c.Logical().Write(mount+"/encode/payments", map[string]interface{}{
		"value": "1111-2222-3333-4444", "transformation": "supplied", "tweak": base64.StdEncoding.EncodeToString([]byte("12345678")),
	})
	var resp *vault.ResponseError
	if !errors.As(err, &resp) || resp.StatusCode != http.StatusBadRequest || len(resp.Errors) == 0 {
		t.Fatalf("bad tweak: %v", err)
	}
	tweak := base64.StdEncoding.EncodeToString([]byte("7 bytes"))
	sup := write(t, c, "encode/payments", map[string]interface{}{"value": "1111-2222-3333-4444", "transformation": "supplied", "tweak": tweak})
	if back := write(t, c, "decode/payments", map[string]interface{}{"value": str(t, sup, "encoded_value"), "transformation": "supplied", "tweak": tweak}); str(t, back, "decoded_value") != "1111-2222-3333-4444" {
		t.Fatalf("supplied tweak round trip: %v", back.Data)
	}

	// Deletion guard, then clean deletes.
	if _, err := c.Logical().Delete(mount + "/transformation/ccn-fpe"); err == nil {
		t.Fatal("a transformation a role uses was deleted")
	}
	for _, p := range []string{"role/payments", "transformation/ccn-fpe", "template/ccn", "alphabet/digits"} {
		if _, err := c.Logical().Delete(mount + "/" + p); err != nil {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
	if gone, err := c.Logical().Read(mount + "/alphabet/digits"); err != nil || gone != nil {
		t.Fatalf("deleted alphabet still reads: %v %v", gone, err)
	}
}
