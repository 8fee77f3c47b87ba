// Command grpc-health serves the standard gRPC health protocol (grpc.health.v1) with grpc-go's own
// implementation, for the catalog checker's tests: it prints its address, then reads commands from
// stdin ("SERVING <service>", "NOT_SERVING <service>") until stdin closes.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	checker := health.NewServer()
	healthpb.RegisterHealthServer(server, checker)
	go func() { _ = server.Serve(listener) }()
	fmt.Println(listener.Addr().String())

	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 {
			continue
		}
		service := ""
		if len(fields) > 1 {
			service = fields[1]
		}
		status := healthpb.HealthCheckResponse_NOT_SERVING
		if fields[0] == "SERVING" {
			status = healthpb.HealthCheckResponse_SERVING
		}
		checker.SetServingStatus(service, status)
		fmt.Println("ok")
	}
	server.Stop()
}
