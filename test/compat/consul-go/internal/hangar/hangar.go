// Package hangar gives the suites a client of the Hangar under test, configured only the way any
// consul/api user configures one: CONSUL_HTTP_ADDR and CONSUL_HTTP_TOKEN from the environment.
package hangar

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
)

// Client is a consul/api client from the environment; the test fails when the variables are missing.
func Client(t *testing.T) *api.Client {
	t.Helper()
	config := api.DefaultConfig()
	if config.Address == "" || config.Token == "" {
		t.Fatal("CONSUL_HTTP_ADDR and CONSUL_HTTP_TOKEN must be set (the jest runner test/compat/catalog-clients.test.ts sets them)")
	}
	client, err := api.NewClient(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// WithToken is a client of the same server acting as another token.
func WithToken(t *testing.T, secret string) *api.Client {
	t.Helper()
	config := api.DefaultConfig()
	config.Token = secret
	client, err := api.NewClient(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

var counter atomic.Int64

// Name is a name unique to this run (the suites share one server).
func Name(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1_000_000, counter.Add(1))
}

// Must fails the test on an error.
func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
