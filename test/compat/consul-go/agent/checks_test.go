package agent

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"hangar.test/compat/consulgo/internal/hangar"
)

// TestHTTPCheckRuns registers a service whose HTTP check points to a server this test starts: the
// server runs the check, so the instance is in Health().Service(passing only) while the backend
// answers, and leaves it once the backend is gone.
func TestHTTPCheckRuns(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	defer backend.Close()

	c := hangar.Client(t)
	name := hangar.Name("agent-http")
	id := name + "-1"
	hangar.Must(t, c.Agent().ServiceRegister(&api.AgentServiceRegistration{
		ID:    id,
		Name:  name,
		Port:  8080,
		Check: &api.AgentServiceCheck{HTTP: backend.URL + "/health", Interval: "1s", Timeout: "1s"},
	}))
	defer func() { _ = c.Agent().ServiceDeregister(id) }()

	passing := func() []*api.ServiceEntry {
		entries, _, err := c.Health().Service(name, "", true, nil)
		hangar.Must(t, err)
		return entries
	}
	waitFor := func(what string, done func() bool) {
		deadline := time.Now().Add(30 * time.Second)
		for !done() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	waitFor("the instance to pass its HTTP check", func() bool { return len(passing()) == 1 })
	entries := passing()
	check := entries[0].Checks[len(entries[0].Checks)-1]
	if check.Status != api.HealthPassing || check.Output != "HTTP GET "+backend.URL+"/health: 200 OK Output: ok" {
		t.Fatalf("check: %+v", check)
	}

	backend.Close()
	waitFor("the instance to leave the passing ones", func() bool { return len(passing()) == 0 })
	checks, _, err := c.Health().Checks(name, nil)
	hangar.Must(t, err)
	if len(checks) != 1 || checks[0].Status != api.HealthCritical {
		t.Fatalf("checks: %+v", checks)
	}
}
