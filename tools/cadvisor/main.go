// cAdvisor for the lab: its library (github.com/google/cadvisor/lib, from the Go module proxy), serving its
// Prometheus metrics of every cgroup. Upstream's command (github.com/google/cadvisor/cmd) is a module the proxy does
// not serve; this is the part of it the lab uses: the raw cgroup handler (--docker_only=false, the library's
// default), the CPU metrics, /metrics on --listen. Built by `make cadvisor` into build/bin/cadvisor.
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/google/cadvisor/lib/cache/memory"
	"github.com/google/cadvisor/lib/container"
	"github.com/google/cadvisor/lib/manager"
	"github.com/google/cadvisor/lib/metrics"
	info "github.com/google/cadvisor/lib/model"
	"github.com/google/cadvisor/lib/utils/sysfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address:port of /metrics")
	// the lab's monitoring directory, on the command line by which `lab down` knows the process for the lab's
	_ = flag.String("lab-dir", "", "the lab's monitoring directory (not read)")
	flag.Parse()
	included := container.MetricSet{container.CpuUsageMetrics: struct{}{}}
	m, err := manager.New(memory.New(2*time.Minute, nil), sysfs.NewRealSysFs(), manager.HousekeepingConfigFlags,
		included, []string{""}, []string{""}, "", 0)
	if err != nil {
		log.Fatalf("cadvisor: %v", err)
	}
	if err := m.Start(); err != nil {
		log.Fatalf("cadvisor: %v", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewPrometheusCollector(m, metrics.DefaultContainerLabels, included, clock.RealClock{},
		info.RequestOptions{IdType: info.TypeName, Count: 1, Recursive: true}))
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	log.Fatal(http.ListenAndServe(*listen, nil))
}
