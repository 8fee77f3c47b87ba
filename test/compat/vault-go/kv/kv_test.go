// Package kv drives Hangar's key/value engine through the official Go client's KVv1 and KVv2
// helpers, unchanged: mounts by `version` option and by the `kv-v2` type, versions, check-and-set,
// metadata, soft delete, undelete, destroy, rollback, and the errors the helpers recognise.
// Environment: VAULT_ADDR, VAULT_TOKEN.
package kv

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"

	"hangar.test/compat/vaultgo/hangartest"
)

func mount(t *testing.T, c *vault.Client, typ string, options map[string]string) string {
	t.Helper()
	path := hangartest.Name("kv-go")
	hangartest.Must(t, "mount "+typ, c.Sys().Mount(path, &vault.MountInput{Type: typ, Options: options}))
	t.Cleanup(func() { _ = c.Sys().Unmount(path) })
	return path
}

func TestKVv1(t *testing.T) {
	c := hangartest.Client(t)
	ctx := context.Background()
	path := mount(t, c, "kv", nil)
	kv := c.KVv1(path)
	hangartest.Must(t, "put", kv.Put(ctx, "app/db", map[string]interface{}{"password": "p1", "ttl": "1h"}))
	hangartest.Must(t, "put", kv.Put(ctx, "app/api", map[string]interface{}{"key": "k"}))
	s, err := kv.Get(ctx, "app/db")
	hangartest.Must(t, "get", err)
	if s.Data["password"] != "p1" || s.Raw.LeaseDuration != 3600 {
		t.Fatalf("get: %#v lease %d", s.Data, s.Raw.LeaseDuration)
	}
	list, err := c.Logical().List(path + "/app")
	hangartest.Must(t, "list", err)
	if keys := list.Data["keys"].([]interface{}); len(keys) != 2 || keys[0] != "api" || keys[1] != "db" {
		t.Fatalf("list: %v", keys)
	}
	hangartest.Must(t, "delete", kv.Delete(ctx, "app/db"))
	if _, err := kv.Get(ctx, "app/db"); !errors.Is(err, vault.ErrSecretNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestKVv2(t *testing.T) {
	c := hangartest.Client(t)
	ctx := context.Background()
	for _, m := range []struct {
		typ     string
		options map[string]string
	}{{"kv", map[string]string{"version": "2"}}, {"kv-v2", nil}} {
		path := mount(t, c, m.typ, m.options)
		kv := c.KVv2(path)
		v1, err := kv.Put(ctx, "app/cfg", map[string]interface{}{"user": "u", "pw": "p1"})
		hangartest.Must(t, "put", err)
		if v1.VersionMetadata.Version != 1 || v1.VersionMetadata.CreatedTime.IsZero() {
			t.Fatalf("put: %#v", v1.VersionMetadata)
		}
		_, err = kv.Put(ctx, "app/cfg", map[string]interface{}{"user": "u", "pw": "p2"}, vault.WithCheckAndSet(1))
		hangartest.Must(t, "put with cas", err)
		if _, err := kv.Put(ctx, "app/cfg", map[string]interface{}{"pw": "x"}, vault.WithCheckAndSet(1)); hangartest.StatusOf(err) != 400 {
			t.Fatalf("stale cas: %v", err)
		}
		got, err := kv.Get(ctx, "app/cfg")
		hangartest.Must(t, "get", err)
		if got.Data["pw"] != "p2" || got.VersionMetadata.Version != 2 {
			t.Fatalf("get: %#v %#v", got.Data, got.VersionMetadata)
		}
		old, err := kv.GetVersion(ctx, "app/cfg", 1)
		hangartest.Must(t, "get version", err)
		if old.Data["pw"] != "p1" {
			t.Fatalf("version 1: %#v", old.Data)
		}

		hangartest.Must(t, "put metadata", kv.PutMetadata(ctx, "app/cfg", vault.KVMetadataPutInput{
			MaxVersions: 5, CustomMetadata: map[string]interface{}{"owner": "ops"}, DeleteVersionAfter: time.Hour,
		}))
		meta, err := kv.GetMetadata(ctx, "app/cfg")
		hangartest.Must(t, "get metadata", err)
		if meta.CurrentVersion != 2 || meta.MaxVersions != 5 || meta.DeleteVersionAfter != time.Hour || meta.CustomMetadata["owner"] != "ops" || len(meta.Versions) != 2 {
			t.Fatalf("metadata: %#v", meta)
		}
		got, err = kv.Get(ctx, "app/cfg")
		hangartest.Must(t, "get with custom metadata", err)
		if !reflect.DeepEqual(got.CustomMetadata, map[string]interface{}{"owner": "ops"}) {
			t.Fatalf("custom metadata: %#v", got.CustomMetadata)
		}

		hangartest.Must(t, "delete", kv.Delete(ctx, "app/cfg"))
		versions, err := kv.GetVersionsAsList(ctx, "app/cfg")
		hangartest.Must(t, "versions", err)
		if len(versions) != 2 || versions[1].DeletionTime.IsZero() || !versions[0].DeletionTime.IsZero() {
			t.Fatalf("versions after delete: %#v", versions)
		}
		hangartest.Must(t, "undelete", kv.Undelete(ctx, "app/cfg", []int{2}))
		hangartest.Must(t, "delete versions", kv.DeleteVersions(ctx, "app/cfg", []int{1}))
		hangartest.Must(t, "destroy", kv.Destroy(ctx, "app/cfg", []int{1}))
		versions, err = kv.GetVersionsAsList(ctx, "app/cfg")
		hangartest.Must(t, "versions", err)
		if !versions[0].Destroyed {
			t.Fatalf("version 1 not destroyed: %#v", versions[0])
		}

		_, err = kv.Put(ctx, "app/cfg", map[string]interface{}{"pw": "p3"})
		hangartest.Must(t, "put 3", err)
		back, err := kv.Rollback(ctx, "app/cfg", 2)
		hangartest.Must(t, "rollback", err)
		got, err = kv.Get(ctx, "app/cfg")
		hangartest.Must(t, "get after rollback", err)
		if back.VersionMetadata.Version != 4 || got.Data["pw"] != "p2" {
			t.Fatalf("rollback: %#v %#v", back.VersionMetadata, got.Data)
		}

		list, err := c.Logical().List(path + "/metadata/app")
		hangartest.Must(t, "list", err)
		if keys := list.Data["keys"].([]interface{}); len(keys) != 1 || keys[0] != "cfg" {
			t.Fatalf("list: %v", keys)
		}
		hangartest.Must(t, "delete metadata", kv.DeleteMetadata(ctx, "app/cfg"))
		if _, err := kv.Get(ctx, "app/cfg"); !errors.Is(err, vault.ErrSecretNotFound) {
			t.Fatalf("get after metadata delete: %v", err)
		}
	}
}

// KVv2().Patch sends a JSON merge patch (HTTP PATCH, application/merge-patch+json) and
// PatchMetadata a metadata merge patch; a wrapped KV read unwraps to the secret.
func TestKVv2Patch(t *testing.T) {
	c := hangartest.Client(t)
	ctx := context.Background()
	path := mount(t, c, "kv-v2", nil)
	kv := c.KVv2(path)
	_, err := kv.Put(ctx, "app", map[string]interface{}{"user": "u", "pw": "p1", "old": "x"})
	hangartest.Must(t, "put", err)
	patched, err := kv.Patch(ctx, "app", map[string]interface{}{"pw": "p2", "old": nil}, vault.WithCheckAndSet(1))
	hangartest.Must(t, "patch", err)
	got, err := kv.Get(ctx, "app")
	hangartest.Must(t, "get", err)
	if patched.VersionMetadata.Version != 2 || !reflect.DeepEqual(got.Data, map[string]interface{}{"user": "u", "pw": "p2"}) {
		t.Fatalf("patched: %#v %#v", patched.VersionMetadata, got.Data)
	}
	if _, err := kv.Patch(ctx, "missing", map[string]interface{}{"a": 1}); !errors.Is(err, vault.ErrSecretNotFound) {
		t.Fatalf("patch of a missing secret: %v", err)
	}
	// Read-then-write patching, the client's fallback method, works too.
	_, err = kv.Patch(ctx, "app", map[string]interface{}{"more": "m"}, vault.WithMergeMethod(vault.KVMergeMethodReadWrite))
	hangartest.Must(t, "patch rw", err)
	hangartest.Must(t, "put metadata", kv.PutMetadata(ctx, "app", vault.KVMetadataPutInput{CustomMetadata: map[string]interface{}{"owner": "ops", "team": "a"}}))
	hangartest.Must(t, "patch metadata", kv.PatchMetadata(ctx, "app", vault.KVMetadataPatchInput{CustomMetadata: map[string]interface{}{"team": "b"}}))
	meta, err := kv.GetMetadata(ctx, "app")
	hangartest.Must(t, "get metadata", err)
	if !reflect.DeepEqual(meta.CustomMetadata, map[string]interface{}{"owner": "ops", "team": "b"}) || meta.CurrentVersion != 3 {
		t.Fatalf("metadata: %#v", meta)
	}

	wrapping, err := c.Clone()
	hangartest.Must(t, "clone", err)
	wrapping.SetToken(c.Token())
	wrapping.SetWrappingLookupFunc(func(operation, path string) string { return "1m" })
	wrapped, err := wrapping.Logical().Read(path + "/data/app")
	hangartest.Must(t, "wrapped read", err)
	secret, err := c.Logical().Unwrap(wrapped.WrapInfo.Token)
	hangartest.Must(t, "unwrap", err)
	if data, _ := secret.Data["data"].(map[string]interface{}); data["pw"] != "p2" || data["more"] != "m" {
		t.Fatalf("unwrapped: %#v", secret.Data)
	}
}

func TestCubbyhole(t *testing.T) {
	c := hangartest.Client(t)
	child, err := c.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"default"}})
	hangartest.Must(t, "token", err)
	mine := hangartest.WithToken(t, c, child.Auth.ClientToken)
	_, err = mine.Logical().Write("cubbyhole/app", map[string]interface{}{"pw": "p"})
	hangartest.Must(t, "write", err)
	s, err := mine.Logical().Read("cubbyhole/app")
	hangartest.Must(t, "read", err)
	if s == nil || s.Data["pw"] != "p" {
		t.Fatalf("read: %#v", s)
	}
	if other, err := c.Logical().Read("cubbyhole/app"); err != nil || other != nil {
		t.Fatalf("root sees another token's cubbyhole: %#v %v", other, err)
	}
	hangartest.Must(t, "revoke", c.Auth().Token().RevokeTree(child.Auth.ClientToken))
}
