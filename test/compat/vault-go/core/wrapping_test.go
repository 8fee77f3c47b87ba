package core

import (
	"encoding/json"
	"strings"
	"testing"

	h "hangar.test/compat/vaultgo/hangartest"
)

// Response wrapping through the Go client: SetWrappingLookupFunc (X-Vault-Wrap-TTL), the parsed
// WrapInfo, Logical().Unwrap with the wrapping token as the client token and as a third party,
// sys/wrapping/lookup, wrap and rewrap; a wrapping token unwraps exactly once.
func TestResponseWrapping(t *testing.T) {
	c := h.Client(t)
	wrapping, err := c.Clone()
	h.Must(t, "Clone", err)
	wrapping.SetToken(c.Token())
	wrapping.SetWrappingLookupFunc(func(operation, path string) string { return "5m" })

	created, err := wrapping.Logical().Write("auth/token/create", map[string]interface{}{"policies": []string{"default"}})
	h.Must(t, "wrapped token create", err)
	info := created.WrapInfo
	if info == nil || created.Auth != nil || info.Token == "" || info.Accessor == "" || info.TTL != 300 || info.CreationPath != "auth/token/create" || info.WrappedAccessor == "" {
		t.Fatalf("wrap info: %#v auth %#v", info, created.Auth)
	}
	look, err := c.Logical().Write("sys/wrapping/lookup", map[string]interface{}{"token": info.Token})
	h.Must(t, "lookup", err)
	if look.Data["creation_ttl"] != json.Number("300") || look.Data["creation_path"] != "auth/token/create" {
		t.Fatalf("lookup: %#v", look.Data)
	}

	// A client without a token of its own unwraps with the wrapping token as its token.
	anonymous, err := c.Clone()
	h.Must(t, "Clone", err)
	unwrapped, err := anonymous.Logical().Unwrap(info.Token)
	h.Must(t, "Unwrap", err)
	if unwrapped.Auth == nil || unwrapped.Auth.Accessor != info.WrappedAccessor {
		t.Fatalf("unwrapped: %#v", unwrapped.Auth)
	}
	_, err = h.WithToken(t, c, unwrapped.Auth.ClientToken).Auth().Token().LookupSelf()
	h.Must(t, "LookupSelf with the unwrapped token", err)
	if _, err := c.Logical().Unwrap(info.Token); h.StatusOf(err) != 400 || !strings.Contains(err.Error(), "wrapping token is not valid or does not exist") {
		t.Fatalf("second Unwrap: %v", err)
	}

	// Arbitrary data: wrap, rewrap (the first token is used up), unwrap by a third party.
	wrapped, err := wrapping.Logical().Write("sys/wrapping/wrap", map[string]interface{}{"k": "v"})
	h.Must(t, "wrap", err)
	rewrapped, err := c.Logical().Write("sys/wrapping/rewrap", map[string]interface{}{"token": wrapped.WrapInfo.Token})
	h.Must(t, "rewrap", err)
	if rewrapped.WrapInfo == nil || rewrapped.WrapInfo.Token == wrapped.WrapInfo.Token || rewrapped.WrapInfo.CreationPath != "sys/wrapping/wrap" {
		t.Fatalf("rewrap: %#v", rewrapped.WrapInfo)
	}
	if _, err := c.Logical().Unwrap(wrapped.WrapInfo.Token); h.StatusOf(err) != 400 {
		t.Fatalf("Unwrap of a rewrapped token: %v", err)
	}
	data, err := c.Logical().Unwrap(rewrapped.WrapInfo.Token)
	h.Must(t, "Unwrap rewrapped", err)
	if data.Data["k"] != "v" {
		t.Fatalf("unwrapped data: %#v", data.Data)
	}
	// The client's default lookup function wraps sys/wrapping/wrap for 5 minutes by itself.
	byDefault, err := c.Logical().Write("sys/wrapping/wrap", map[string]interface{}{"k": "v"})
	h.Must(t, "wrap with the default TTL", err)
	if byDefault.WrapInfo == nil || byDefault.WrapInfo.TTL != 300 {
		t.Fatalf("default wrap: %#v", byDefault.WrapInfo)
	}
}
