// Command pause is the pod sandbox's process: it holds the pod's namespaces open and does
// nothing else, as Kubernetes' own pause image does. No registry is reachable on the test
// machine, so the harness builds this one into the sandbox image containerd is configured with.
// As PID 1 of a pod sharing its process namespace it reaps orphaned children.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
