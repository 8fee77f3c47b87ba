package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

// A file audit device through vault/api: enable, list, hash, a hashed line in the file, disable.
func TestAuditDevice(t *testing.T) {
	c := h.Client(t)
	path := h.Name("go-audit")
	file := filepath.Join(t.TempDir(), "audit.log")
	h.Must(t, "EnableAuditWithOptions", c.Sys().EnableAuditWithOptions(path, &vault.EnableAuditOptions{
		Type:        "file",
		Description: "from vault/api",
		Options:     map[string]string{"file_path": file, "hmac_accessor": "false"},
	}))
	t.Cleanup(func() { _ = c.Sys().DisableAudit(path) })

	devices, err := c.Sys().ListAudit()
	h.Must(t, "ListAudit", err)
	d := devices[path+"/"]
	if d == nil || d.Type != "file" || d.Description != "from vault/api" || d.Options["file_path"] != file || d.Path != path+"/" {
		t.Fatalf("ListAudit: %+v", devices)
	}

	// The audit-hash request is itself audited: its input appears in the file as this very hash.
	secretValue := "go-audit-" + h.Name("value")
	hash, err := c.Sys().AuditHash(path, secretValue)
	h.Must(t, "AuditHash", err)
	if !strings.HasPrefix(hash, "hmac-sha256:") || len(hash) != len("hmac-sha256:")+64 {
		t.Fatalf("AuditHash: %q", hash)
	}
	tokenHash, err := c.Sys().AuditHash(path, c.Token())
	h.Must(t, "AuditHash", err)

	h.Must(t, "DisableAudit", c.Sys().DisableAudit(path))
	devices, err = c.Sys().ListAudit()
	h.Must(t, "ListAudit", err)
	if devices[path+"/"] != nil {
		t.Fatalf("DisableAudit: still listed: %+v", devices)
	}

	text, err := os.ReadFile(file)
	h.Must(t, "read the audit file", err)
	log := string(text)
	if strings.Contains(log, secretValue) || strings.Contains(log, c.Token()) {
		t.Fatal("the audit file holds a secret value or the token in plaintext")
	}
	if !strings.Contains(log, `"client_token":"`+tokenHash+`"`) || !strings.Contains(log, hash) {
		t.Fatalf("the audit file lacks the hashed token or value:\n%s", log)
	}
}
