// Package dns resolves services and nodes through Hangar's DNS interface with Go's own resolver
// (net.Resolver dialing the listener, as applications configured for the public service's DNS do),
// after registering them with github.com/hashicorp/consul/api.
package dns

import (
	"context"
	"errors"
	"net"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

// resolver is Go's pure-Go resolver sending every question to CONSUL_DNS_ADDR (HOST:PORT).
func resolver(t *testing.T) *net.Resolver {
	t.Helper()
	addr := os.Getenv("CONSUL_DNS_ADDR")
	if addr == "" {
		t.Fatal("CONSUL_DNS_ADDR must be set (the jest runner test/compat/catalog-clients.test.ts sets it)")
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

func lookupHost(t *testing.T, r *net.Resolver, name string) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, name)
	sort.Strings(addrs)
	return addrs, err
}

func TestLookupHostAndSRVOfHealthyInstances(t *testing.T) {
	c := hangar.Client(t)
	r := resolver(t)
	name := hangar.Name("dns-web")
	for i, addr := range []string{"10.9.0.1", "10.9.0.2"} {
		node := name + "-node-" + string(rune('a'+i))
		_, err := c.Catalog().Register(&api.CatalogRegistration{
			Node:    node,
			Address: addr,
			Service: &api.AgentService{ID: name, Service: name, Port: 8080 + i, Tags: []string{"tag" + string(rune('a'+i))}},
			Check:   &api.AgentCheck{CheckID: name + "-check", Name: "up", ServiceID: name, Status: api.HealthPassing},
		}, nil)
		hangar.Must(t, err)
	}

	addrs, err := lookupHost(t, r, name+".service.consul.")
	hangar.Must(t, err)
	if len(addrs) != 2 || addrs[0] != "10.9.0.1" || addrs[1] != "10.9.0.2" {
		t.Fatalf("LookupHost: %v", addrs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cname, srvs, err := r.LookupSRV(ctx, name, "tcp", "service.consul.")
	hangar.Must(t, err)
	if cname != "_"+name+"._tcp.service.consul." || len(srvs) != 2 {
		t.Fatalf("LookupSRV: %q %+v", cname, srvs)
	}
	ports := []int{int(srvs[0].Port), int(srvs[1].Port)}
	sort.Ints(ports)
	if ports[0] != 8080 || ports[1] != 8081 {
		t.Fatalf("LookupSRV ports: %v", ports)
	}
	// A tag, as RFC 2782 names it.
	_, tagged, err := r.LookupSRV(ctx, name, "tagb", "service.consul.")
	hangar.Must(t, err)
	if len(tagged) != 1 || tagged[0].Port != 8081 || tagged[0].Target != name+"-node-b.node.dc1.consul." {
		t.Fatalf("LookupSRV tag: %+v", tagged)
	}
	// The node itself.
	nodeAddrs, err := lookupHost(t, r, name+"-node-a.node.consul.")
	hangar.Must(t, err)
	if len(nodeAddrs) != 1 || nodeAddrs[0] != "10.9.0.1" {
		t.Fatalf("LookupHost node: %v", nodeAddrs)
	}

	// A check turning critical takes its instance out of the answers.
	_, err = c.Catalog().Register(&api.CatalogRegistration{
		Node: name + "-node-a", Address: "10.9.0.1", SkipNodeUpdate: true,
		Check: &api.AgentCheck{CheckID: name + "-check", Name: "up", ServiceID: name, Status: api.HealthCritical},
	}, nil)
	hangar.Must(t, err)
	addrs, err = lookupHost(t, r, name+".service.consul.")
	hangar.Must(t, err)
	if len(addrs) != 1 || addrs[0] != "10.9.0.2" {
		t.Fatalf("LookupHost after critical: %v", addrs)
	}
}

func TestUnknownNamesAreNotFound(t *testing.T) {
	r := resolver(t)
	_, err := lookupHost(t, r, hangar.Name("nope")+".service.consul.")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("LookupHost of an unknown service: %v", err)
	}
}
