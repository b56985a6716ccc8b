package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// start is one cold start: the whole of it as the invoker waited, and the emulator's own account
// of its parts, zero when its log does not give them. The rest of total is the emulator's start,
// exec and the invoker's polling.
type start struct {
	total time.Duration
	// init is the function's process start, its Go package inits and main's wiring, until it
	// asked the runtime API for its first event.
	init time.Duration
	// event is the handler's work on the first event, connections to the stand-ins included.
	event time.Duration
	// calls are the requests the function sent to the stand-ins, by service and operation
	// (meter): its init sends none, so they are the first event's.
	calls map[string]int
}

// What the emulator logs at the end of the init and of an invocation, e.g.
// "INIT REPORT(durationMs: 17.002000)" and
// "INVOKE RTDONE(status: success, produced bytes: 0, duration: 7.797000ms)".
var (
	initReport   = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
	invokeReport = regexp.MustCompile(`INVOKE RTDONE\(status: success, [^)]*duration: ([0-9.]+)ms\)`)
)

// coldStart starts the emulator on t's bootstrap and polls until t answers its event.
func coldStart(t *target, rie string, timeout time.Duration) (start, error) {
	addr, runtimeAPI := freeAddr(), freeAddr()
	if addr == "" || runtimeAPI == "" {
		return start{}, errors.New("no free loopback port")
	}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", runtimeAPI, "./bootstrap")
	cmd.Dir, cmd.Env = t.dir, t.environ
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out

	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return start{}, fmt.Errorf("starting the emulator: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer stop(cmd, exited)

	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		status, body, err := post(client, "http://"+addr+invokePath, t.event)
		switch {
		case err == nil && status == http.StatusOK:
			s := start{total: time.Since(begin)}
			stop(cmd, exited) // before reading out, which the emulator writes to until it exits
			if err := t.answered(body); err != nil {
				return start{}, fmt.Errorf("answered %s: %w", body, err)
			}
			s.init, s.event = reported(initReport, out.Bytes()), reported(invokeReport, out.Bytes())
			return s, nil
		case time.Since(begin) > timeout:
			stop(cmd, exited)
			return start{}, fmt.Errorf("no answer within %s (last: status %d, %v); emulator output:\n%s", timeout, status, err, out.String())
		}
		select {
		case <-exited:
			return start{}, fmt.Errorf("the emulator exited before answering; its output:\n%s", out.String())
		case <-time.After(pollEvery):
		}
	}
}

// reported is the first duration in milliseconds re finds in the emulator's log, or zero.
func reported(re *regexp.Regexp, log []byte) time.Duration {
	m := re.FindSubmatch(log)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0
	}
	return time.Duration(v * float64(time.Millisecond))
}

func post(client *http.Client, url string, event []byte) (int, []byte, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(event))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// stop ends the emulator, which kills the function's process on SIGTERM. It may be called again
// once the emulator has exited.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// freeAddr is a loopback address with a port free at the time of asking, or "" if none is.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer l.Close()
	return l.Addr().String()
}
