// Package catalog drives nodes, services, checks, health, filters and the agent endpoints through
// github.com/hashicorp/consul/api only.
package catalog

import (
	"testing"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

func TestAgentSelfAndVersion(t *testing.T) {
	c := hangar.Client(t)
	self, err := c.Agent().Self()
	hangar.Must(t, err)
	if self["Config"]["Datacenter"] != "dc1" {
		t.Fatalf("agent self: %v", self["Config"])
	}
	name, err := c.Agent().NodeName()
	hangar.Must(t, err)
	if name == "" {
		t.Fatal("agent node name is empty")
	}
	leader, err := c.Status().Leader()
	hangar.Must(t, err)
	if leader == "" {
		t.Fatal("no leader")
	}
}

func TestNodesServicesChecksAndFilters(t *testing.T) {
	c := hangar.Client(t)
	catalog := c.Catalog()
	node := hangar.Name("node")
	service := hangar.Name("svc")
	// The Go client sends whole structs: Check with ExposedPort and Definition, Service with Weights...
	_, err := catalog.Register(&api.CatalogRegistration{
		Node:     node,
		Address:  "10.1.0.1",
		NodeMeta: map[string]string{"env": "compat", "rack": "r9"},
		Service:  &api.AgentService{ID: service + "-1", Service: service, Tags: []string{"primary"}, Port: 8080, Meta: map[string]string{"v": "2"}},
		Checks: api.HealthChecks{
			{Node: node, CheckID: "http", Name: "http", Status: api.HealthPassing, ServiceID: service + "-1", Definition: api.HealthCheckDefinition{HTTP: "http://10.1.0.1:8080/health"}},
		},
	}, nil)
	hangar.Must(t, err)
	_, err = catalog.Register(&api.CatalogRegistration{
		Node: node, Address: "10.1.0.1", NodeMeta: map[string]string{"env": "compat", "rack": "r9"},
		Check: &api.AgentCheck{Node: node, CheckID: "disk", Name: "disk", Status: api.HealthWarning},
	}, nil)
	hangar.Must(t, err)

	nodes, _, err := catalog.Nodes(&api.QueryOptions{NodeMeta: map[string]string{"env": "compat"}})
	hangar.Must(t, err)
	if len(nodes) != 1 || nodes[0].Node != node || nodes[0].Meta["rack"] != "r9" {
		t.Fatalf("nodes by meta: %+v", nodes)
	}
	filtered, _, err := catalog.Nodes(&api.QueryOptions{Filter: `Meta.rack == "r9" and Node == "` + node + `"`})
	hangar.Must(t, err)
	if len(filtered) != 1 {
		t.Fatalf("nodes by filter: %d", len(filtered))
	}
	none, _, err := catalog.Nodes(&api.QueryOptions{Filter: `Meta.rack == "nope"`})
	hangar.Must(t, err)
	if len(none) != 0 {
		t.Fatalf("nodes by a filter nothing matches: %d", len(none))
	}

	services, _, err := catalog.Services(nil)
	hangar.Must(t, err)
	if tags, ok := services[service]; !ok || len(tags) != 1 || tags[0] != "primary" {
		t.Fatalf("services: %v", services)
	}
	instances, _, err := catalog.Service(service, "primary", nil)
	hangar.Must(t, err)
	if len(instances) != 1 || instances[0].ServicePort != 8080 || instances[0].Node != node {
		t.Fatalf("service instances: %+v", instances)
	}
	one, _, err := catalog.Node(node, nil)
	hangar.Must(t, err)
	if one.Services[service+"-1"] == nil {
		t.Fatalf("node services: %+v", one)
	}

	health := c.Health()
	entries, _, err := health.Service(service, "", false, nil)
	hangar.Must(t, err)
	if len(entries) != 1 || entries[0].Service.ID != service+"-1" || len(entries[0].Checks) != 3 {
		t.Fatalf("health service: %+v", entries)
	}
	// The node's disk check warns: the instance is not passing.
	passing, _, err := health.Service(service, "", true, nil)
	hangar.Must(t, err)
	if len(passing) != 0 {
		t.Fatalf("passing instances: %d", len(passing))
	}
	if entries[0].Checks.AggregatedStatus() != api.HealthWarning {
		t.Fatalf("aggregated status: %s", entries[0].Checks.AggregatedStatus())
	}
	warning, _, err := health.State(api.HealthWarning, &api.QueryOptions{NodeMeta: map[string]string{"env": "compat"}})
	hangar.Must(t, err)
	if len(warning) != 1 || warning[0].CheckID != "disk" {
		t.Fatalf("warning checks: %+v", warning)
	}
	nodeChecks, _, err := health.Node(node, nil)
	hangar.Must(t, err)
	if len(nodeChecks) != 3 {
		t.Fatalf("node checks: %d", len(nodeChecks))
	}
	serviceChecks, _, err := health.Checks(service, nil)
	hangar.Must(t, err)
	if len(serviceChecks) != 1 || serviceChecks[0].CheckID != "http" {
		t.Fatalf("service checks: %+v", serviceChecks)
	}

	_, err = catalog.Deregister(&api.CatalogDeregistration{Node: node}, nil)
	hangar.Must(t, err)
	gone, _, err := catalog.Node(node, nil)
	hangar.Must(t, err)
	if gone != nil {
		t.Fatalf("node still there: %+v", gone)
	}
}
