// Package agent drives the agent API (service and check registration, TTL updates, maintenance,
// members) and the catalog reads that show its registrations, through github.com/hashicorp/consul/api only.
package agent

import (
	"testing"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

func TestServiceRegisterWithChecksAndTTL(t *testing.T) {
	c := hangar.Client(t)
	agent := c.Agent()
	name := hangar.Name("agent-svc")
	id := name + "-1"
	hangar.Must(t, agent.ServiceRegister(&api.AgentServiceRegistration{
		ID:                id,
		Name:              name,
		Port:              8443,
		Address:           "127.0.0.1",
		Tags:              []string{"blue"},
		Meta:              map[string]string{"team": "compat"},
		Weights:           &api.AgentWeights{Passing: 5, Warning: 1},
		EnableTagOverride: true,
		Check:             &api.AgentServiceCheck{CheckID: id + "-ttl", TTL: "30s", Notes: "heartbeat"},
		Checks: api.AgentServiceChecks{
			{CheckID: id + "-http", HTTP: "http://127.0.0.1:8443/health", Interval: "10s", Timeout: "2s", Method: "GET",
				Header: map[string][]string{"X-Probe": {"1"}}, DeregisterCriticalServiceAfter: "5m"},
		},
	}))

	services, err := agent.Services()
	hangar.Must(t, err)
	s := services[id]
	if s == nil || s.Port != 8443 || s.Weights.Passing != 5 || !s.EnableTagOverride || s.Meta["team"] != "compat" {
		t.Fatalf("agent services: %+v", s)
	}
	one, _, err := agent.Service(id, nil)
	hangar.Must(t, err)
	if one.ContentHash == "" {
		t.Fatalf("agent service: %+v", one)
	}

	checks, err := agent.Checks()
	hangar.Must(t, err)
	if ttl := checks[id+"-ttl"]; ttl == nil || ttl.Status != api.HealthCritical || ttl.Type != "ttl" {
		t.Fatalf("ttl check: %+v", ttl)
	}
	http := checks[id+"-http"]
	if http == nil || http.Type != "http" || http.Definition.HTTP != "http://127.0.0.1:8443/health" || http.Definition.Interval.String() != "10s" ||
		http.Definition.DeregisterCriticalServiceAfter.String() != "5m0s" {
		t.Fatalf("http check: %+v", http)
	}

	hangar.Must(t, agent.UpdateTTL(id+"-ttl", "all good", api.HealthPassing))
	hangar.Must(t, agent.PassTTL(id+"-ttl", "still good"))
	status, info, err := agent.AgentHealthServiceByID(id)
	hangar.Must(t, err)
	// The HTTP check never ran (no checker yet): critical, so the aggregate is critical.
	if status != api.HealthCritical || info == nil || info.Service.ID != id {
		t.Fatalf("agent health: %s %+v", status, info)
	}

	entries, _, err := c.Health().Service(name, "", false, nil)
	hangar.Must(t, err)
	if len(entries) != 1 || entries[0].Service.ID != id {
		t.Fatalf("health service: %+v", entries)
	}
	for _, check := range entries[0].Checks {
		if check.CheckID == id+"-ttl" && (check.Status != api.HealthPassing || check.Output != "still good") {
			t.Fatalf("ttl check after pass: %+v", check)
		}
	}

	hangar.Must(t, agent.ServiceDeregister(id))
	services, err = agent.Services()
	hangar.Must(t, err)
	if services[id] != nil {
		t.Fatal("service still registered")
	}
}

func TestMaintenanceAndReplaceChecks(t *testing.T) {
	c := hangar.Client(t)
	agent := c.Agent()
	name := hangar.Name("maint")
	hangar.Must(t, agent.ServiceRegister(&api.AgentServiceRegistration{Name: name, Port: 80, Check: &api.AgentServiceCheck{TTL: "1m", Status: api.HealthPassing}}))
	hangar.Must(t, agent.EnableServiceMaintenance(name, "upgrading"))
	checks, err := agent.Checks()
	hangar.Must(t, err)
	if m := checks[api.ServiceMaintPrefix+name]; m == nil || m.Status != api.HealthCritical || m.Notes != "upgrading" {
		t.Fatalf("maintenance check: %+v", m)
	}
	passing, _, err := c.Health().Service(name, "", true, nil)
	hangar.Must(t, err)
	if len(passing) != 0 {
		t.Fatalf("in maintenance yet passing: %+v", passing)
	}
	hangar.Must(t, agent.DisableServiceMaintenance(name))
	passing, _, err = c.Health().Service(name, "", true, nil)
	hangar.Must(t, err)
	if len(passing) != 1 {
		t.Fatalf("out of maintenance: %+v", passing)
	}

	hangar.Must(t, agent.ServiceRegisterOpts(&api.AgentServiceRegistration{Name: name, Port: 80,
		Check: &api.AgentServiceCheck{CheckID: name + "-tcp", TCP: "127.0.0.1:80", Interval: "10s"}}, api.ServiceRegisterOpts{ReplaceExistingChecks: true}))
	checks, err = agent.Checks()
	hangar.Must(t, err)
	if checks["service:"+name] != nil || checks[name+"-tcp"] == nil {
		t.Fatalf("replace-existing-checks: %+v", checks)
	}
	hangar.Must(t, agent.ServiceDeregister(name))
}

func TestMembersAndNode(t *testing.T) {
	c := hangar.Client(t)
	members, err := c.Agent().Members(false)
	hangar.Must(t, err)
	self, err := c.Agent().NodeName()
	hangar.Must(t, err)
	if len(members) == 0 || members[0].Name != self || members[0].Tags["role"] != "consul" || members[0].Status != 1 {
		t.Fatalf("members: %+v", members)
	}
	dcs, err := c.Catalog().Datacenters()
	hangar.Must(t, err)
	if len(dcs) != 1 || dcs[0] != "dc1" {
		t.Fatalf("datacenters: %v", dcs)
	}
}

// What `consul info` and `consul reload` call: Self's Stats sections and Reload.
func TestSelfStatsAndReload(t *testing.T) {
	c := hangar.Client(t)
	self, err := c.Agent().Self()
	hangar.Must(t, err)
	stats, ok := self["Stats"]
	if !ok {
		t.Fatalf("no Stats in agent/self: %v", self)
	}
	consul, _ := stats["consul"].(map[string]interface{})
	build, _ := stats["build"].(map[string]interface{})
	agent, _ := stats["agent"].(map[string]interface{})
	if consul["server"] != "true" || consul["leader"] != "true" || build["version"] == "" || agent["services"] == nil {
		t.Fatalf("Stats: %v", stats)
	}
	hangar.Must(t, c.Agent().Reload())
}

func TestNodeServiceListAndSlashNames(t *testing.T) {
	c := hangar.Client(t)
	node := "redis/" + hangar.Name("redis")
	_, err := c.Catalog().Register(&api.CatalogRegistration{
		Node: node, Address: "10.3.0.1",
		Service: &api.AgentService{ID: "redis-1", Service: "redis", Port: 6379, Weights: api.AgentWeights{Passing: 2, Warning: 1}},
	}, nil)
	hangar.Must(t, err)
	n, _, err := c.Catalog().Node(node, nil)
	hangar.Must(t, err)
	if n == nil || n.Node.Node != node || n.Services["redis-1"].Weights.Passing != 2 {
		t.Fatalf("node with '/': %+v", n)
	}
	list, _, err := c.Catalog().NodeServiceList(node, nil)
	hangar.Must(t, err)
	if list == nil || list.Node.Node != node || len(list.Services) != 1 || list.Services[0].Port != 6379 {
		t.Fatalf("node service list: %+v", list)
	}
	_, err = c.Catalog().Deregister(&api.CatalogDeregistration{Node: node}, nil)
	hangar.Must(t, err)
}
