// Package pki drives Hangar's PKI engine with the official Go client, unchanged: a root and an
// intermediate on two mounts, a role, issuing and signing, revocation and the CRL. Go's own
// crypto/x509 and crypto/tls judge the results.
// Environment: VAULT_ADDR, VAULT_TOKEN.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"net"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	"hangar.test/compat/vaultgo/hangartest"
)

const (
	rootMount = "pki-go"
	intMount  = "pki-go-int"
)

func parse(t *testing.T, text interface{}) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(text.(string)))
	if block == nil {
		t.Fatalf("not PEM: %v", text)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestPKIEngine(t *testing.T) {
	c := hangartest.Client(t)
	for _, m := range []string{rootMount, intMount} {
		if err := c.Sys().Mount(m, &vault.MountInput{Type: "pki", Config: vault.MountConfigInput{MaxLeaseTTL: "87600h"}}); err != nil {
			t.Fatal(err)
		}
	}

	root := hangartest.Write(t, c, rootMount+"/root/generate/internal", map[string]interface{}{"common_name": "Go Root", "ttl": "87600h", "key_type": "ec", "key_bits": 256})
	rootCert := parse(t, root.Data["certificate"])
	if !rootCert.IsCA || root.Data["private_key"] != nil {
		t.Fatalf("root: CA %v, private key returned %v", rootCert.IsCA, root.Data["private_key"] != nil)
	}
	roots := x509.NewCertPool()
	roots.AddCert(rootCert)

	csr := hangartest.Write(t, c, intMount+"/intermediate/generate/internal", map[string]interface{}{"common_name": "Go Intermediate"})
	signed := hangartest.Write(t, c, rootMount+"/root/sign-intermediate", map[string]interface{}{"csr": csr.Data["csr"], "common_name": "Go Intermediate", "ttl": "43800h"})
	intCert := parse(t, signed.Data["certificate"])
	if _, err := intCert.Verify(x509.VerifyOptions{Roots: roots}); err != nil {
		t.Fatalf("intermediate does not verify: %v", err)
	}
	hangartest.Write(t, c, intMount+"/intermediate/set-signed", map[string]interface{}{"certificate": signed.Data["certificate"]})
	inters := x509.NewCertPool()
	inters.AddCert(intCert)

	hangartest.Write(t, c, intMount+"/roles/svc", map[string]interface{}{"allowed_domains": []string{"svc.test"}, "allow_subdomains": true, "max_ttl": "72h", "key_type": "ec", "key_bits": 256})
	role, err := c.Logical().Read(intMount + "/roles/svc")
	if err != nil || role.Data["allow_subdomains"] != true {
		t.Fatalf("read role: %v %v", err, role)
	}

	issued := hangartest.Write(t, c, intMount+"/issue/svc", map[string]interface{}{"common_name": "api.svc.test", "ip_sans": "127.0.0.1", "ttl": "1h"})
	leaf := parse(t, issued.Data["certificate"])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters, DNSName: "api.svc.test", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Fatalf("leaf does not verify: %v", err)
	}
	if _, err := c.Logical().Write(intMount+"/issue/svc", map[string]interface{}{"common_name": "evil.test"}); err == nil || !strings.Contains(err.Error(), "not allowed by this role") {
		t.Fatalf("a name outside the role: %v", err)
	}

	// crypto/tls: a server with the issued chain, a client trusting only the root.
	pair, err := tls.X509KeyPair([]byte(issued.Data["certificate"].(string)+"\n"+signed.Data["certificate"].(string)), []byte(issued.Data["private_key"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Write([]byte("ok"))
			conn.Close()
		}
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "api.svc.test"})
	if err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	conn.Close()
	if _, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "other.test"}); err == nil {
		t.Fatal("TLS accepted a name the certificate does not carry")
	}

	// sign: a CSR made by Go.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "web.svc.test"}, DNSNames: []string{"web.svc.test"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}, key)
	sign := hangartest.Write(t, c, intMount+"/sign/svc", map[string]interface{}{"csr": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))})
	if got := parse(t, sign.Data["certificate"]); got.Subject.CommonName != "web.svc.test" || len(got.IPAddresses) != 1 {
		t.Fatalf("signed: %v %v", got.Subject, got.IPAddresses)
	}

	// revoke, LIST certs, the CRL (raw DER, parsed by Go).
	serial := issued.Data["serial_number"].(string)
	list, err := c.Logical().List(intMount + "/certs")
	if err != nil || !strings.Contains(strings.Join(toStrings(list.Data["keys"]), ","), serial) {
		t.Fatalf("list certs: %v %v", err, list)
	}
	hangartest.Write(t, c, intMount+"/revoke", map[string]interface{}{"serial_number": serial})
	raw, err := c.Logical().ReadRaw(intMount + "/crl")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	crl, err := x509.ParseRevocationList(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := crl.CheckSignatureFrom(intCert); err != nil {
		t.Fatalf("CRL signature: %v", err)
	}
	if len(crl.RevokedCertificateEntries) != 1 || crl.RevokedCertificateEntries[0].SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		t.Fatalf("CRL entries: %v", crl.RevokedCertificateEntries)
	}
	read, err := c.Logical().Read(intMount + "/cert/" + serial)
	if err != nil || read.Data["revocation_time"] == nil {
		t.Fatalf("read cert: %v %v", err, read)
	}
}

func toStrings(v interface{}) []string {
	var out []string
	for _, x := range v.([]interface{}) {
		out = append(out, x.(string))
	}
	return out
}
