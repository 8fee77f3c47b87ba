// Package ssh drives Hangar's SSH engine with the official Go client, unchanged: mounts, the CA,
// roles, certificate signing (checked by golang.org/x/crypto/ssh's own certificate checker), and
// one-time passwords with the helper API that vault-ssh-helper uses.
// Environment: VAULT_ADDR, VAULT_TOKEN.
package ssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	"golang.org/x/crypto/ssh"
	"hangar.test/compat/vaultgo/hangartest"
)

const mount = "ssh-go"

func TestSSHEngine(t *testing.T) {
	c := hangartest.Client(t)
	if err := c.Sys().Mount(mount, &vault.MountInput{Type: "ssh"}); err != nil {
		t.Fatal(err)
	}

	ca := hangartest.Write(t, c, mount+"/config/ca", map[string]interface{}{"key_type": "ed25519"})
	caKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(ca.Data["public_key"].(string)))
	if err != nil {
		t.Fatalf("CA public key: %v", err)
	}
	hangartest.Write(t, c, mount+"/roles/web", map[string]interface{}{
		"key_type":                "ca",
		"allow_user_certificates": true,
		"allowed_users":           "alice,bob",
		"default_user":            "alice",
		"allowed_extensions":      "permit-pty",
		"default_extensions":      map[string]string{"permit-pty": ""},
		"ttl":                     "1h",
		"max_ttl":                 "2h",
	})
	role, err := c.Logical().Read(mount + "/roles/web")
	if err != nil || role.Data["key_type"] != "ca" || role.Data["allowed_users"] != "alice,bob" {
		t.Fatalf("read role: %v %v", err, role)
	}
	list, err := c.Logical().List(mount + "/roles")
	if err != nil || len(list.Data["keys"].([]interface{})) != 1 {
		t.Fatalf("list roles: %v %v", err, list)
	}

	t.Run("sign, checked by x/crypto/ssh", func(t *testing.T) {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		sshPub, _ := ssh.NewPublicKey(pub)
		signed, err := c.SSHWithMountPoint(mount).SignKey("web", map[string]interface{}{
			"public_key":       string(ssh.MarshalAuthorizedKey(sshPub)),
			"valid_principals": "bob",
			"ttl":              "30m",
		})
		if err != nil {
			t.Fatal(err)
		}
		text := signed.Data["signed_key"].(string)
		if !strings.HasSuffix(text, "\n") {
			t.Errorf("signed_key has no trailing newline: %q", text)
		}
		parsed, _, _, _, err := ssh.ParseAuthorizedKey([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		cert := parsed.(*ssh.Certificate)
		if strconv.FormatUint(cert.Serial, 16) != signed.Data["serial_number"] {
			t.Errorf("serial %x, response says %v", cert.Serial, signed.Data["serial_number"])
		}
		checker := ssh.CertChecker{IsUserAuthority: func(k ssh.PublicKey) bool { return string(k.Marshal()) == string(caKey.Marshal()) }}
		if _, err := checker.Authenticate(connMeta("bob"), cert); err != nil {
			t.Errorf("bob: %v", err)
		}
		if _, err := checker.Authenticate(connMeta("alice"), cert); err == nil {
			t.Error("a certificate for bob authenticates alice")
		}
		if d := time.Until(time.Unix(int64(cert.ValidBefore), 0)); d < 29*time.Minute || d > 31*time.Minute {
			t.Errorf("valid for %v, want 30m", d)
		}
		if _, ok := cert.Extensions["permit-pty"]; !ok {
			t.Errorf("extensions %v lack the default permit-pty", cert.Extensions)
		}

		if _, err := c.SSHWithMountPoint(mount).SignKey("web", map[string]interface{}{
			"public_key": string(ssh.MarshalAuthorizedKey(sshPub)), "valid_principals": "mallory",
		}); err == nil || !strings.Contains(err.Error(), "mallory is not a valid value") {
			t.Errorf("principal outside the role: %v", err)
		}
	})

	t.Run("issue", func(t *testing.T) {
		issued := hangartest.Write(t, c, mount+"/issue/web", map[string]interface{}{"key_type": "ec", "key_bits": 384})
		key, err := ssh.ParsePrivateKey([]byte(issued.Data["private_key"].(string)))
		if err != nil {
			t.Fatalf("private key: %v", err)
		}
		parsed, _, _, _, err := ssh.ParseAuthorizedKey([]byte(issued.Data["signed_key"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		if string(parsed.(*ssh.Certificate).Key.Marshal()) != string(key.PublicKey().Marshal()) {
			t.Error("the certificate is not for the issued key")
		}
		if issued.Data["private_key_type"] != "ec" {
			t.Errorf("private_key_type %v", issued.Data["private_key_type"])
		}
	})

	t.Run("one-time passwords and the helper's verify", func(t *testing.T) {
		hangartest.Write(t, c, mount+"/roles/otp", map[string]interface{}{"key_type": "otp", "default_user": "ubuntu", "cidr_list": "10.0.0.0/8"})
		cred, err := c.SSHWithMountPoint(mount).Credential("otp", map[string]interface{}{"ip": "10.1.2.3"})
		if err != nil {
			t.Fatal(err)
		}
		if cred.LeaseID == "" || cred.Data["key_type"] != "otp" || cred.Data["username"] != "ubuntu" {
			t.Fatalf("credential %+v", cred)
		}
		helper := c.SSHHelperWithMountPoint(mount)
		echo, err := helper.Verify(vault.VerifyEchoRequest)
		if err != nil || echo.Message != vault.VerifyEchoResponse {
			t.Fatalf("echo: %v %+v", err, echo)
		}
		verified, err := helper.Verify(cred.Data["key"].(string))
		if err != nil || verified.Username != "ubuntu" || verified.IP != "10.1.2.3" || verified.RoleName != "otp" {
			t.Fatalf("verify: %v %+v", err, verified)
		}
		if _, err := helper.Verify(cred.Data["key"].(string)); err == nil {
			t.Error("an OTP verified twice")
		}
		roles, err := hangartest.Write(t, c, mount+"/lookup", map[string]interface{}{"ip": "10.1.2.3"}), nil
		if err != nil || len(roles.Data["roles"].([]interface{})) != 1 {
			t.Errorf("lookup: %+v", roles)
		}
		if err := c.Sys().Revoke(cred.LeaseID); err != nil {
			t.Errorf("revoke: %v", err)
		}
	})

	if _, err := c.Logical().Delete(mount + "/config/ca"); err != nil {
		t.Fatal(err)
	}
}

type meta string

func (m meta) User() string        { return string(m) }
func (meta) SessionID() []byte     { return nil }
func (meta) ClientVersion() []byte { return nil }
func (meta) ServerVersion() []byte { return nil }
func (meta) RemoteAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (meta) LocalAddr() net.Addr   { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func connMeta(user string) meta    { return meta(user) }
