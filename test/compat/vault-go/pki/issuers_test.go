package pki

import (
	"encoding/json"
	"testing"

	vault "github.com/hashicorp/vault/api"
	"hangar.test/compat/vaultgo/hangartest"
)

// TestPKIIssuers: several issuers on one mount (Vault 1.11+), a role on one of them with every field
// read back as the Terraform provider reads it, and sign-intermediate as Vault's tutorial calls it.
func TestPKIIssuers(t *testing.T) {
	c := hangartest.Client(t)
	mount, intm := hangartest.Name("pki-go-iss"), hangartest.Name("pki-go-iss-int")
	for _, m := range []string{mount, intm} {
		hangartest.Must(t, "mount", c.Sys().Mount(m, &vault.MountInput{Type: "pki", Config: vault.MountConfigInput{MaxLeaseTTL: "87600h"}}))
	}
	a := hangartest.Write(t, c, mount+"/root/generate/internal", map[string]interface{}{"common_name": "Go Root A", "issuer_name": "go-a", "ttl": "87600h", "key_type": "ec"})
	b := hangartest.Write(t, c, mount+"/issuers/generate/root/internal", map[string]interface{}{"common_name": "Go Root B", "issuer_name": "go-b", "ttl": "8760h", "key_type": "rsa"})
	list, err := c.Logical().List(mount + "/issuers")
	hangartest.Must(t, "list issuers", err)
	info := list.Data["key_info"].(map[string]interface{})
	if len(info) != 2 || info[a.Data["issuer_id"].(string)].(map[string]interface{})["is_default"] != true {
		t.Fatalf("issuers: %v", list.Data)
	}
	issuer, err := c.Logical().Read(mount + "/issuer/go-b")
	hangartest.Must(t, "read issuer", err)
	if issuer.Data["issuer_id"] != b.Data["issuer_id"] || issuer.Data["key_id"] != b.Data["key_id"] || issuer.Data["leaf_not_after_behavior"] != "err" {
		t.Fatalf("issuer: %v", issuer.Data)
	}
	cfg := hangartest.Write(t, c, mount+"/config/issuers", map[string]interface{}{"default": "go-b"})
	if cfg.Data["default"] != b.Data["issuer_id"] {
		t.Fatalf("config/issuers: %v", cfg.Data)
	}

	// The provider reads key_bits and signature_bits as json.Number and panics without them.
	hangartest.Write(t, c, mount+"/roles/tf", map[string]interface{}{"allow_any_name": true, "key_type": "rsa", "signature_bits": 512, "issuer_ref": "go-b", "use_pss": true})
	role, err := c.Logical().Read(mount + "/roles/tf")
	hangartest.Must(t, "read role", err)
	for _, field := range []string{"key_bits", "signature_bits", "ttl", "max_ttl", "not_before_duration"} {
		if _, err := role.Data[field].(json.Number).Int64(); err != nil {
			t.Fatalf("role %s: %v (%T)", field, role.Data[field], role.Data[field])
		}
	}
	if role.Data["issuer_ref"] != "go-b" || role.Data["use_pss"] != true || role.Data["not_after"] != "" {
		t.Fatalf("role: %v", role.Data)
	}
	leaf := hangartest.Write(t, c, mount+"/issue/tf", map[string]interface{}{"common_name": "tf.go.test", "ttl": "1h"})
	cert := parse(t, leaf.Data["certificate"])
	if cert.SignatureAlgorithm.String() != "SHA512-RSAPSS" || leaf.Data["issuing_ca"] != b.Data["certificate"] {
		t.Fatalf("leaf signed with %v by %v", cert.SignatureAlgorithm, leaf.Data["issuing_ca"])
	}
	if err := cert.CheckSignatureFrom(parse(t, b.Data["certificate"])); err != nil {
		t.Fatalf("leaf signature: %v", err)
	}

	// The tutorial: no common_name (the CSR's), ttl=43800h against a shorter root (truncated, with a warning).
	csr := hangartest.Write(t, c, intm+"/intermediate/generate/internal", map[string]interface{}{"common_name": "example.com Intermediate Authority"})
	signed := hangartest.Write(t, c, mount+"/issuer/go-b/sign-intermediate", map[string]interface{}{"csr": csr.Data["csr"], "format": "pem_bundle", "ttl": "43800h"})
	intCert := parse(t, signed.Data["certificate"])
	if intCert.Subject.CommonName != "example.com Intermediate Authority" || !intCert.NotAfter.Equal(parse(t, b.Data["certificate"]).NotAfter) || len(signed.Warnings) == 0 {
		t.Fatalf("intermediate: CN %q notAfter %v warnings %v", intCert.Subject.CommonName, intCert.NotAfter, signed.Warnings)
	}
	set := hangartest.Write(t, c, intm+"/intermediate/set-signed", map[string]interface{}{"certificate": signed.Data["certificate"]})
	if imported, _ := set.Data["imported_issuers"].([]interface{}); len(imported) != 2 {
		t.Fatalf("set-signed: %v", set.Data)
	}
}
