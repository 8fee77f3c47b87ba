package core

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

// jwtLogin is a vault.AuthMethod for the JWT login method (vault/api has helpers for other methods only).
type jwtLogin struct{ mount, role, jwt string }

func (l jwtLogin) Login(ctx context.Context, c *vault.Client) (*vault.Secret, error) {
	return c.Logical().WriteWithContext(ctx, "auth/"+l.mount+"/login", map[string]interface{}{"role": l.role, "jwt": l.jwt})
}

func TestJWTLogin(t *testing.T) {
	c := h.Client(t)
	mount := h.Name("go-jwt-login")
	h.Must(t, "EnableAuth", c.Sys().EnableAuthWithOptions(mount, &vault.EnableAuthOptions{Type: "jwt"}))
	defer c.Sys().DisableAuth(mount)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	h.Must(t, "rsa", err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	h.Must(t, "ecdsa", err)
	// An EC and an RSA key side by side: each token is checked with the key that fits its alg.
	_, err = c.Logical().Write("auth/"+mount+"/config", map[string]interface{}{
		"jwt_validation_pubkeys": []string{publicPEM(t, &ecKey.PublicKey), publicPEM(t, &rsaKey.PublicKey)},
		"jwt_supported_algs":     []string{"RS256", "ES256"},
		"bound_issuer":           "https://ci.example",
	})
	h.Must(t, "config", err)
	_, err = c.Logical().Write("auth/"+mount+"/role/ci", map[string]interface{}{
		"role_type": "jwt", "user_claim": "sub", "bound_audiences": []string{"hangar"},
		"token_policies": []string{"default"}, "token_ttl": "60s", "token_max_ttl": "10m",
	})
	h.Must(t, "role", err)
	role, err := c.Logical().Read("auth/" + mount + "/role/ci")
	h.Must(t, "read role", err)
	if role.Data["user_claim"] != "sub" {
		t.Fatalf("role: %+v", role.Data)
	}
	roles, err := c.Logical().List("auth/" + mount + "/role")
	h.Must(t, "list roles", err)
	if keys, _ := roles.Data["keys"].([]interface{}); len(keys) != 1 {
		t.Fatalf("roles: %+v", roles.Data)
	}
	claims := map[string]interface{}{"iss": "https://ci.example", "aud": "hangar", "sub": "pipeline-7", "exp": time.Now().Add(5 * time.Minute).Unix(), "iat": time.Now().Unix()}
	var tokens []string
	for _, signer := range []struct {
		alg string
		key crypto.Signer
	}{{"RS256", rsaKey}, {"ES256", ecKey}} {
		login, err := c.Clone()
		h.Must(t, "Clone", err)
		secret, err := login.Auth().Login(context.Background(), jwtLogin{mount, "ci", signJWT(t, signer.alg, signer.key, claims)})
		h.Must(t, "Login "+signer.alg, err)
		// Right after the login the TTL reads the full 60 seconds.
		if secret.Auth.LeaseDuration != 60 || !secret.Auth.Renewable || secret.Auth.Orphan != true || login.Token() != secret.Auth.ClientToken {
			t.Fatalf("Login %s: %+v", signer.alg, secret.Auth)
		}
		tokens = append(tokens, secret.Auth.ClientToken)
	}
	self, err := h.WithToken(t, c, tokens[0]).Auth().Token().LookupSelf()
	h.Must(t, "LookupSelf", err)
	if self.Data["path"] != "auth/"+mount+"/login" || self.Data["ttl"] != json.Number("60") {
		t.Fatalf("LookupSelf: %+v", self.Data)
	}
	if _, err := c.Logical().Write("auth/"+mount+"/login", map[string]interface{}{"role": "ci", "jwt": "not.a.jwt"}); h.StatusOf(err) != 400 {
		t.Fatalf("login with a bad JWT: %v", err)
	}
	// Login tokens are leases under auth/<mount>/login: listed, and revoked by prefix.
	list, err := c.Logical().List("sys/leases/lookup/auth/" + mount + "/login")
	h.Must(t, "List token leases", err)
	if keys, _ := list.Data["keys"].([]interface{}); len(keys) != 2 {
		t.Fatalf("token leases: %+v", list)
	}
	h.Must(t, "RevokePrefix auth/", c.Sys().RevokePrefix("auth/"+mount))
	for _, token := range tokens {
		alive(t, c, token, false)
	}
}

func publicPEM(t *testing.T, key crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(key)
	h.Must(t, "MarshalPKIXPublicKey", err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func signJWT(t *testing.T, alg string, key crypto.Signer, claims map[string]interface{}) string {
	enc := func(v interface{}) string {
		b, err := json.Marshal(v)
		h.Must(t, "json", err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]string{"alg": alg, "typ": "JWT"}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		s, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		h.Must(t, "sign", err)
		sig = s
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		h.Must(t, "sign", err)
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	default:
		t.Fatalf("unsupported key %T", key)
	}
	return fmt.Sprintf("%s.%s", input, strings.TrimRight(base64.RawURLEncoding.EncodeToString(sig), "="))
}
