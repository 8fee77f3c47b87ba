package core

import (
	"net/url"
	"os"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	h "hangar.test/compat/vaultgo/hangartest"
)

// The first half of the CLI's `vault login -method=oidc`: the auth URL from a real provider
// (OIDC_ISSUER, started by the jest runner), and a callback that does not belong to it.
func TestOIDCAuthURL(t *testing.T) {
	issuer := os.Getenv("OIDC_ISSUER")
	if issuer == "" {
		t.Fatal("OIDC_ISSUER must name the provider the jest runner started")
	}
	const redirect = "http://127.0.0.1:8250/oidc/callback"
	c := h.Client(t)
	mount := h.Name("go-oidc")
	h.Must(t, "EnableAuth", c.Sys().EnableAuthWithOptions(mount, &vault.EnableAuthOptions{Type: "oidc"}))
	defer c.Sys().DisableAuth(mount)
	_, err := c.Logical().Write("auth/"+mount+"/config", map[string]interface{}{
		"oidc_discovery_url": issuer, "oidc_client_id": "hangar", "oidc_client_secret": "hangar-secret", "default_role": "web",
	})
	h.Must(t, "config", err)
	_, err = c.Logical().Write("auth/"+mount+"/role/web", map[string]interface{}{
		"user_claim": "sub", "allowed_redirect_uris": []string{redirect}, "token_policies": "default",
	})
	h.Must(t, "role", err)
	anonymous := h.WithToken(t, c, "")
	anonymous.ClearToken()
	started, err := anonymous.Logical().Write("auth/"+mount+"/oidc/auth_url", map[string]interface{}{"redirect_uri": redirect, "client_nonce": "go-nonce-123456"})
	h.Must(t, "auth_url", err)
	authURL, _ := started.Data["auth_url"].(string)
	parsed, err := url.Parse(authURL)
	h.Must(t, "parse auth_url", err)
	q := parsed.Query()
	if !strings.HasPrefix(authURL, issuer) || q.Get("client_id") != "hangar" || q.Get("redirect_uri") != redirect || q.Get("state") == "" || q.Get("nonce") == "" {
		t.Fatalf("auth_url: %s", authURL)
	}
	_, err = anonymous.Logical().ReadWithData("auth/"+mount+"/oidc/callback", map[string][]string{"state": {"not-a-state"}, "code": {"c"}, "nonce": {"n"}})
	if h.StatusOf(err) != 400 || !strings.Contains(err.Error(), "state") {
		t.Fatalf("callback with a foreign state: %v", err)
	}
}
