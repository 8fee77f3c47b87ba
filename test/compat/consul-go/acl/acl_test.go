// Package acl drives ACL bootstrap, tokens, policies, roles, auth methods, binding rules and login
// through github.com/hashicorp/consul/api only.
package acl

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

func TestBootstrapIsRefusedOnceAManagementTokenExists(t *testing.T) {
	c := hangar.Client(t)
	_, _, err := c.ACL().Bootstrap()
	if err == nil || !strings.Contains(err.Error(), "ACL bootstrap no longer allowed (reset index:") || !strings.Contains(err.Error(), "403") {
		t.Fatalf("bootstrap with a root token in place: want 403 no longer allowed, got %v", err)
	}
}

func TestPoliciesRolesAndTokens(t *testing.T) {
	c := hangar.Client(t)
	acl := c.ACL()
	// The Go client sends computed fields (Hash, CreateIndex, Datacenters) back as they are.
	policy, _, err := acl.PolicyCreate(&api.ACLPolicy{Name: hangar.Name("kv-read"), Rules: `key_prefix "app/" { policy = "read" }`}, nil)
	hangar.Must(t, err)
	policy.Description = "reads app/"
	policy, _, err = acl.PolicyUpdate(policy, nil)
	hangar.Must(t, err)
	if policy.Description != "reads app/" || len(policy.Hash) == 0 {
		t.Fatalf("policy update: %+v", policy)
	}
	byName, _, err := acl.PolicyReadByName(policy.Name, nil)
	hangar.Must(t, err)
	if byName.ID != policy.ID {
		t.Fatalf("policy by name: %+v", byName)
	}
	missing, _, err := acl.PolicyRead("8a4d8f51-0d49-4c2b-9df6-3ff7e1e3e0a1", nil)
	if missing != nil || err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown policy: want a 404, got %v %v", missing, err)
	}

	role, _, err := acl.RoleCreate(&api.ACLRole{
		Name:              hangar.Name("app-role"),
		Policies:          []*api.ACLRolePolicyLink{{ID: policy.ID}},
		ServiceIdentities: []*api.ACLServiceIdentity{{ServiceName: "app"}},
		TemplatedPolicies: []*api.ACLTemplatedPolicy{{TemplateName: api.ACLTemplatedPolicyDNSName}},
	}, nil)
	hangar.Must(t, err)
	role.Description = "app"
	role, _, err = acl.RoleUpdate(role, nil)
	hangar.Must(t, err)
	if role.Description != "app" || len(role.TemplatedPolicies) != 1 || role.Policies[0].Name != policy.Name {
		t.Fatalf("role update: %+v", role)
	}

	token, _, err := acl.TokenCreate(&api.ACLToken{
		Description:       "app token",
		Roles:             []*api.ACLTokenRoleLink{{Name: role.Name}},
		TemplatedPolicies: []*api.ACLTemplatedPolicy{{TemplateName: api.ACLTemplatedPolicyNodeName, TemplateVariables: &api.ACLTemplatedPolicyVariables{Name: "app-node"}}},
		ExpirationTTL:     time.Hour,
	}, nil)
	hangar.Must(t, err)
	if token.ExpirationTime == nil || token.SecretID == "" {
		t.Fatalf("token: %+v", token)
	}
	// acl:write sees the secret on read, as with the public service.
	read, _, err := acl.TokenRead(token.AccessorID, nil)
	hangar.Must(t, err)
	if read.SecretID != token.SecretID || len(read.Roles) != 1 {
		t.Fatalf("token read: %+v", read)
	}
	read.Description = "app token 2"
	updated, _, err := acl.TokenUpdate(read, nil)
	hangar.Must(t, err)
	if updated.Description != "app token 2" {
		t.Fatalf("token update: %+v", updated)
	}
	clone, _, err := acl.TokenClone(token.AccessorID, "a clone", nil)
	hangar.Must(t, err)
	self, _, err := hangar.WithToken(t, clone.SecretID).ACL().TokenReadSelf(nil)
	hangar.Must(t, err)
	if self.AccessorID != clone.AccessorID {
		t.Fatalf("self: %+v", self)
	}
	// The role's policy applies to the token: app/ is readable, other keys are not.
	kv := hangar.WithToken(t, token.SecretID).KV()
	if _, _, err := kv.Get("app/x", nil); err != nil {
		t.Fatalf("app/ read: %v", err)
	}
	if _, _, err := kv.Get("other/x", nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("other/ read: want 403, got %v", err)
	}

	// The root token (the initial management token) is readable and listed by its accessor.
	root, _, err := acl.TokenReadSelf(nil)
	hangar.Must(t, err)
	rootRead, _, err := acl.TokenRead(root.AccessorID, nil)
	hangar.Must(t, err)
	if rootRead.SecretID != root.SecretID {
		t.Fatalf("root token read: %+v", rootRead)
	}
	list, _, err := acl.TokenList(nil)
	hangar.Must(t, err)
	found := map[string]bool{}
	for _, entry := range list {
		found[entry.AccessorID] = true
	}
	if !found[root.AccessorID] || !found[token.AccessorID] {
		t.Fatalf("token list lacks the root token or the new one")
	}
	filtered, _, err := acl.TokenListFiltered(api.ACLTokenFilterOptions{Role: role.ID}, nil)
	hangar.Must(t, err)
	// The token and its clone carry the role.
	if len(filtered) != 2 {
		t.Fatalf("tokens by role: %d", len(filtered))
	}
	policies, _, err := acl.PolicyList(&api.QueryOptions{Filter: `Name == "` + policy.Name + `"`})
	hangar.Must(t, err)
	if len(policies) != 1 {
		t.Fatalf("filtered policies: %d", len(policies))
	}
	missingToken, _, err := acl.TokenRead("8a4d8f51-0d49-4c2b-9df6-3ff7e1e3e0a1", nil)
	if missingToken != nil || err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown token: want a 404, got %v %v", missingToken, err)
	}

	for _, id := range []string{clone.AccessorID, token.AccessorID} {
		_, err = acl.TokenDelete(id, nil)
		hangar.Must(t, err)
	}
	_, err = acl.RoleDelete(role.ID, nil)
	hangar.Must(t, err)
	_, err = acl.PolicyDelete(policy.ID, nil)
	hangar.Must(t, err)
}

func TestAuthMethodsBindingRulesAndLogin(t *testing.T) {
	c := hangar.Client(t)
	acl := c.ACL()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	hangar.Must(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	hangar.Must(t, err)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))

	name := hangar.Name("jwt")
	method, _, err := acl.AuthMethodCreate(&api.ACLAuthMethod{
		Name:          name,
		Type:          "jwt",
		MaxTokenTTL:   10 * time.Minute,
		TokenLocality: "global",
		Config: map[string]interface{}{
			"JWTValidationPubKeys": []string{pemKey},
			"BoundAudiences":       []string{"hangar"},
			"ClaimMappings":        map[string]string{"sub": "user"},
			"ListClaimMappings":    map[string]string{"groups": "groups"},
		},
	}, nil)
	hangar.Must(t, err)
	// MaxTokenTTL comes back as the duration string the Go client decodes.
	if method.MaxTokenTTL != 10*time.Minute {
		t.Fatalf("MaxTokenTTL: %v", method.MaxTokenTTL)
	}
	read, _, err := acl.AuthMethodRead(name, nil)
	hangar.Must(t, err)
	read.Description = "tests"
	_, _, err = acl.AuthMethodUpdate(read, nil)
	hangar.Must(t, err)
	methods, _, err := acl.AuthMethodList(nil)
	hangar.Must(t, err)
	seen := false
	for _, m := range methods {
		seen = seen || (m.Name == name && m.MaxTokenTTL == 10*time.Minute)
	}
	if !seen {
		t.Fatal("auth method list")
	}

	policy, _, err := acl.PolicyCreate(&api.ACLPolicy{Name: hangar.Name("login-policy"), Rules: `key_prefix "login/" { policy = "write" }`}, nil)
	hangar.Must(t, err)
	service, _, err := acl.BindingRuleCreate(&api.ACLBindingRule{AuthMethod: name, Selector: `value.user == "alice"`, BindType: api.BindingRuleBindTypeService, BindName: "svc-${value.user}"}, nil)
	hangar.Must(t, err)
	byPolicy, _, err := acl.BindingRuleCreate(&api.ACLBindingRule{AuthMethod: name, Selector: `"admins" in list.groups`, BindType: api.BindingRuleBindTypePolicy, BindName: policy.Name}, nil)
	hangar.Must(t, err)
	service.Description = "service identity"
	_, _, err = acl.BindingRuleUpdate(service, nil)
	hangar.Must(t, err)
	rules, _, err := acl.BindingRuleList(name, nil)
	hangar.Must(t, err)
	if len(rules) != 2 {
		t.Fatalf("binding rules: %d", len(rules))
	}

	jwt := signJWT(t, key, map[string]interface{}{"sub": "alice", "groups": []string{"admins"}, "aud": "hangar", "iat": time.Now().Unix(), "exp": time.Now().Add(time.Minute).Unix()})
	token, _, err := acl.Login(&api.ACLLoginParams{AuthMethod: name, BearerToken: jwt, Meta: map[string]string{"from": "go"}}, nil)
	hangar.Must(t, err)
	if len(token.ServiceIdentities) != 1 || token.ServiceIdentities[0].ServiceName != "svc-alice" || len(token.Policies) != 1 || token.Policies[0].ID != policy.ID {
		t.Fatalf("login token: %+v", token)
	}
	if token.Local || token.ExpirationTime == nil {
		t.Fatalf("login token locality or expiry: %+v", token)
	}
	// The policy bound by the rule applies.
	loggedIn := hangar.WithToken(t, token.SecretID)
	_, err = loggedIn.KV().Put(&api.KVPair{Key: "login/ok", Value: []byte("1")}, nil)
	hangar.Must(t, err)
	_, err = loggedIn.ACL().Logout(nil)
	hangar.Must(t, err)
	if _, _, err := loggedIn.ACL().TokenReadSelf(nil); err == nil {
		t.Fatal("token still valid after logout")
	}

	for _, id := range []string{service.ID, byPolicy.ID} {
		_, err = acl.BindingRuleDelete(id, nil)
		hangar.Must(t, err)
	}
	_, err = acl.AuthMethodDelete(name, nil)
	hangar.Must(t, err)
}

// signJWT signs claims with RS256, the public service's default algorithm.
func signJWT(t *testing.T, key *rsa.PrivateKey, claims map[string]interface{}) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	payload, _ := json.Marshal(claims)
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signing))
	signature, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	hangar.Must(t, err)
	return signing + "." + enc.EncodeToString(signature)
}
