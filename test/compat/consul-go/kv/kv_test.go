// Package kv drives sessions, the KV store, Lock, Semaphore, Txn and blocking queries through
// github.com/hashicorp/consul/api only.
package kv

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

func TestSessions(t *testing.T) {
	c := hangar.Client(t)
	sessions := c.Session()
	id, _, err := sessions.Create(&api.SessionEntry{Name: "compat", TTL: "30s", LockDelay: 2 * time.Second, Behavior: api.SessionBehaviorDelete}, nil)
	hangar.Must(t, err)
	info, _, err := sessions.Info(id, nil)
	hangar.Must(t, err)
	if info == nil || info.Name != "compat" || info.LockDelay != 2*time.Second || info.TTL != "30s" || info.Behavior != "delete" {
		t.Fatalf("session info: %+v", info)
	}
	renewed, _, err := sessions.Renew(id, nil)
	hangar.Must(t, err)
	if renewed == nil || renewed.ID != id {
		t.Fatalf("renew: %+v", renewed)
	}
	list, _, err := sessions.List(nil)
	hangar.Must(t, err)
	onNode, _, err := sessions.Node(info.Node, nil)
	hangar.Must(t, err)
	if len(list) == 0 || len(onNode) == 0 {
		t.Fatalf("session lists: %d %d", len(list), len(onNode))
	}
	noChecks, _, err := sessions.CreateNoChecks(&api.SessionEntry{Name: "no checks"}, nil)
	hangar.Must(t, err)
	for _, s := range []string{id, noChecks} {
		_, err = sessions.Destroy(s, nil)
		hangar.Must(t, err)
	}
	gone, _, err := sessions.Info(id, nil)
	hangar.Must(t, err)
	if gone != nil {
		t.Fatalf("destroyed session: %+v", gone)
	}
}

func TestKVWithExactFlagsAndCAS(t *testing.T) {
	kv := hangar.Client(t).KV()
	prefix := hangar.Name("kv") + "/"
	const flags = uint64(0xe0f69a2baa414de0)
	_, err := kv.Put(&api.KVPair{Key: prefix + "a", Value: []byte("1"), Flags: flags}, nil)
	hangar.Must(t, err)
	pair, _, err := kv.Get(prefix+"a", nil)
	hangar.Must(t, err)
	if pair == nil || pair.Flags != flags || string(pair.Value) != "1" {
		t.Fatalf("get: %+v", pair)
	}
	ok, _, err := kv.CAS(&api.KVPair{Key: prefix + "a", Value: []byte("2"), ModifyIndex: pair.ModifyIndex}, nil)
	hangar.Must(t, err)
	stale, _, err := kv.CAS(&api.KVPair{Key: prefix + "a", Value: []byte("3"), ModifyIndex: pair.ModifyIndex}, nil)
	hangar.Must(t, err)
	if !ok || stale {
		t.Fatalf("cas: %v %v", ok, stale)
	}
	_, err = kv.Put(&api.KVPair{Key: prefix + "b/c", Value: []byte("x")}, nil)
	hangar.Must(t, err)
	keys, _, err := kv.Keys(prefix, "/", nil)
	hangar.Must(t, err)
	if strings.Join(keys, ",") != prefix+"a,"+prefix+"b/" {
		t.Fatalf("keys: %v", keys)
	}
	pairs, _, err := kv.List(prefix, nil)
	hangar.Must(t, err)
	if len(pairs) != 2 {
		t.Fatalf("list: %d", len(pairs))
	}
	_, err = kv.DeleteTree(prefix, nil)
	hangar.Must(t, err)
	if left, _, _ := kv.List(prefix, nil); len(left) != 0 {
		t.Fatalf("after delete tree: %d", len(left))
	}
}

func TestLockIsExclusive(t *testing.T) {
	c := hangar.Client(t)
	key := hangar.Name("locks") + "/leader"
	first, err := c.LockOpts(&api.LockOptions{Key: key, Value: []byte("first"), LockWaitTime: 100 * time.Millisecond, LockTryOnce: true})
	hangar.Must(t, err)
	lost, err := first.Lock(nil)
	hangar.Must(t, err)
	if lost == nil {
		t.Fatal("first lock not acquired")
	}
	second, err := c.LockOpts(&api.LockOptions{Key: key, Value: []byte("second"), LockWaitTime: 200 * time.Millisecond, LockTryOnce: true})
	hangar.Must(t, err)
	if got, err := second.Lock(nil); err != nil || got != nil {
		t.Fatalf("second lock while held: %v %v", got, err)
	}
	// The lock's entry carries the Go client's lock flag, an uint64 above 2^63.
	pair, _, err := c.KV().Get(key, nil)
	hangar.Must(t, err)
	if pair == nil || pair.Flags != api.LockFlagValue || pair.Session == "" {
		t.Fatalf("lock entry: %+v", pair)
	}
	hangar.Must(t, first.Unlock())
	hangar.Must(t, first.Destroy())
}

func TestSemaphoreHoldsAtMostLimit(t *testing.T) {
	c := hangar.Client(t)
	prefix := hangar.Name("sema")
	var held []*api.Semaphore
	for i := 0; i < 2; i++ {
		s, err := c.SemaphoreOpts(&api.SemaphoreOptions{Prefix: prefix, Limit: 2, SemaphoreWaitTime: 200 * time.Millisecond, SemaphoreTryOnce: true})
		hangar.Must(t, err)
		lost, err := s.Acquire(nil)
		hangar.Must(t, err)
		if lost == nil {
			t.Fatalf("slot %d not acquired", i)
		}
		held = append(held, s)
	}
	third, err := c.SemaphoreOpts(&api.SemaphoreOptions{Prefix: prefix, Limit: 2, SemaphoreWaitTime: 200 * time.Millisecond, SemaphoreTryOnce: true})
	hangar.Must(t, err)
	if lost, err := third.Acquire(nil); err != nil || lost != nil {
		t.Fatalf("third slot of two: %v %v", lost, err)
	}
	hangar.Must(t, held[0].Release())
	lost, err := third.Acquire(nil)
	hangar.Must(t, err)
	if lost == nil {
		t.Fatal("slot freed by a release was not acquired")
	}
	for _, s := range []*api.Semaphore{held[1], third} {
		hangar.Must(t, s.Release())
	}
}

func TestTxnIsAllOrNothing(t *testing.T) {
	c := hangar.Client(t)
	prefix := hangar.Name("txn") + "/"
	ok, resp, _, err := c.Txn().Txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: prefix + "a", Value: []byte("1"), Flags: api.SemaphoreFlagValue}},
		{KV: &api.KVTxnOp{Verb: api.KVCAS, Key: prefix + "b", Value: []byte("2"), Index: 0}},
		{KV: &api.KVTxnOp{Verb: api.KVGet, Key: prefix + "a"}},
	}, nil)
	hangar.Must(t, err)
	if !ok || len(resp.Results) != 3 || !bytes.Equal(resp.Results[2].KV.Value, []byte("1")) || resp.Results[2].KV.Flags != api.SemaphoreFlagValue {
		t.Fatalf("txn: %v %+v", ok, resp)
	}
	ok, resp, _, err = c.Txn().Txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: prefix + "a", Value: []byte("changed")}},
		{KV: &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: prefix + "b"}},
	}, nil)
	hangar.Must(t, err)
	if ok || len(resp.Errors) != 1 || resp.Errors[0].OpIndex != 1 {
		t.Fatalf("failing txn: %v %+v", ok, resp)
	}
	pair, _, err := c.KV().Get(prefix+"a", nil)
	hangar.Must(t, err)
	if string(pair.Value) != "1" {
		t.Fatalf("a failed transaction wrote: %q", pair.Value)
	}
}

func TestBlockingQueryWakesOnChange(t *testing.T) {
	kv := hangar.Client(t).KV()
	key := hangar.Name("watch")
	_, err := kv.Put(&api.KVPair{Key: key, Value: []byte("1")}, nil)
	hangar.Must(t, err)
	_, meta, err := kv.Get(key, nil)
	hangar.Must(t, err)
	done := make(chan *api.KVPair, 1)
	go func() {
		pair, _, err := kv.Get(key, &api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 30 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- pair
	}()
	_, err = kv.Put(&api.KVPair{Key: key, Value: []byte("2")}, nil)
	hangar.Must(t, err)
	select {
	case pair := <-done:
		if pair == nil || string(pair.Value) != "2" {
			t.Fatalf("blocking get: %+v", pair)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not wake on the write")
	}
}
