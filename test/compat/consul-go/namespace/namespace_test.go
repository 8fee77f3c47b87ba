// Package namespace drives namespaces through github.com/hashicorp/consul/api only.
package namespace

import (
	"testing"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

func TestNamespaces(t *testing.T) {
	c := hangar.Client(t)
	namespaces := c.Namespaces()
	policy, _, err := c.ACL().PolicyCreate(&api.ACLPolicy{Name: hangar.Name("ns-default"), Rules: `key_prefix "" { policy = "read" }`}, nil)
	hangar.Must(t, err)
	name := hangar.Name("team")
	created, _, err := namespaces.Create(&api.Namespace{
		Name:        name,
		Description: "a team",
		Meta:        map[string]string{"owner": "a"},
		ACLs:        &api.NamespaceACLConfig{PolicyDefaults: []api.ACLLink{{Name: policy.Name}}},
	}, nil)
	hangar.Must(t, err)
	if created.ACLs == nil || len(created.ACLs.PolicyDefaults) != 1 || created.ACLs.PolicyDefaults[0].ID != policy.ID {
		t.Fatalf("namespace: %+v", created)
	}
	// An update replaces the whole namespace: the Meta left out is gone.
	updated, _, err := namespaces.Update(&api.Namespace{Name: name, Description: "renamed"}, nil)
	hangar.Must(t, err)
	if updated.Description != "renamed" || len(updated.Meta) != 0 || len(updated.ACLs.PolicyDefaults) != 0 {
		t.Fatalf("namespace update: %+v", updated)
	}
	read, _, err := namespaces.Read(name, nil)
	hangar.Must(t, err)
	if read == nil || read.Description != "renamed" {
		t.Fatalf("namespace read: %+v", read)
	}
	list, _, err := namespaces.List(nil)
	hangar.Must(t, err)
	names := map[string]bool{}
	for _, ns := range list {
		names[ns.Name] = true
	}
	if !names["default"] || !names[name] {
		t.Fatalf("namespace list: %v", names)
	}
	// Objects live in it: a KV entry and a policy.
	_, err = c.KV().Put(&api.KVPair{Key: "in-ns", Value: []byte("1")}, &api.WriteOptions{Namespace: name})
	hangar.Must(t, err)
	pair, _, err := c.KV().Get("in-ns", &api.QueryOptions{Namespace: name})
	hangar.Must(t, err)
	if pair == nil || pair.Namespace != name {
		t.Fatalf("kv in namespace: %+v", pair)
	}
	_, err = namespaces.Delete(name, nil)
	hangar.Must(t, err)
	marked, _, err := namespaces.Read(name, nil)
	hangar.Must(t, err)
	if marked == nil || marked.DeletedAt == nil {
		t.Fatalf("deleted namespace is marked: %+v", marked)
	}
}
