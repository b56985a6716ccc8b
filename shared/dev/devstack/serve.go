package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/hostrun"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/spotprices"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/apihandler"
	"github.com/tidegate/tidegate/shared/handlers/dispatchhandler"
	"github.com/tidegate/tidegate/shared/handlers/reconcilehandler"
	"github.com/tidegate/tidegate/shared/handlers/webhookhandler"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/podspec"
)

// shutdownGrace bounds how long in-flight requests get when the stack stops.
const shutdownGrace = 5 * time.Second

// workers are the stack's servers and loops. A server that fails cancels the context they all
// run under, so the stack stops rather than serving half of itself; stop ends them and waits.
type workers struct {
	wg     sync.WaitGroup
	cancel context.CancelFunc
	log    *slog.Logger
}

// serve serves h on l until ctx ends, then gives in-flight requests shutdownGrace to finish.
func (w *workers) serve(ctx context.Context, name string, l net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	w.wg.Go(func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("server stopped", "server", name, "err", err)
			w.cancel()
		}
	})
	w.wg.Go(func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer scancel()
		_ = srv.Shutdown(sctx)
	})
}

// stop ends every server and loop and waits until all have returned.
func (w *workers) stop() {
	w.cancel()
	w.wg.Wait()
}

// functions are what the Lambdas would run with: their settings, their clients on the
// stand-ins, and the queues made for them.
type functions struct {
	cfg      config.Config
	clients  handlers.Clients
	clusters *kube.Clusters
	queues   resources
}

// start runs the functions as AWS would, under ws until ctx ends: the API on api, the spot price
// book on prices, the dispatch and webhook queues long-polled into their handlers, the reconcile
// beat every opt.Beat and, when opt asks, the hosted apps' processes (startHosts).
func (f functions) start(ctx context.Context, ws *workers, opt Options, api, prices net.Listener, book *spotprices.Book, say io.Writer) error {
	log := ws.log
	spot := dispatchhandler.Prices(f.cfg, f.clients)
	// A price set by hand is seen by the next beat, not a minute later as in AWS.
	spot.TTL = opt.Beat
	// One set of typed clients for the API and the beat; dispatch uses the dynamic ones alone.
	typedClusters := typed.New(f.clusters)
	h, err := apihandler.New(f.cfg, f.clients, typedClusters, log, nil)
	if err != nil {
		return err
	}
	beater, err := reconcilehandler.New(f.cfg, f.clients, typedClusters, log)
	if err != nil {
		return err
	}
	beater.FollowDepth = opt.FollowDepth
	d, err := dispatchhandler.New(f.cfg, f.clients, f.clusters, spot, log)
	if err != nil {
		return err
	}
	if opt.WrapAPI != nil {
		h = opt.WrapAPI(h)
	}
	ws.serve(ctx, "api", api, meteredAPI(opt.Meter, h))
	ws.serve(ctx, "prices", prices, book.Handler())
	ws.wg.Go(func() {
		// A point a beat: the console's price chart moves as fast as prices set by hand.
		d.PriceStep = max(opt.Beat.Round(time.Second), time.Second)
		pollQueue(ctx, log, f.clients.SQS, f.queues.dispatch.url, f.queues.dispatch.arn, meteredSQS(opt.Meter, "dispatch", d), dispatchInvocations)
	})
	ws.wg.Go(func() {
		pollQueue(ctx, log, f.clients.SQS, f.queues.webhook.url, f.queues.webhook.arn, meteredSQS(opt.Meter, "webhook", webhookhandler.New(f.cfg, f.clients, log)), 1)
	})
	ws.wg.Go(func() {
		beat(ctx, log, opt.Beat, meteredBeat(opt.Meter, beater.HandleBeat))
	})
	if opt.RegisterHosts {
		return f.startHosts(ctx, ws, opt, say)
	}
	return nil
}

// startHosts runs the hosted apps' processes on this machine (hostrun) when opt asks and the
// machine can; otherwise the registrar stands in for them, and the stack says loudly that no app
// code runs. Apps opt.NeverRegister names are neither run nor registered.
func (f functions) startHosts(ctx context.Context, ws *workers, opt Options, say io.Writer) error {
	log := ws.log
	kc, err := sandbox.KubeClient(f.cfg.Kubeconfig)
	if err != nil {
		return err
	}
	r := newRegistrar(kc, f.cfg.AppsNamespace, opt.NeverRegister, log)
	every := max(opt.Beat/2, minBeat)
	if opt.RunHosts {
		runner, err := hostrun.New(hostrun.Options{
			Kubeconfig: f.cfg.Kubeconfig, Namespace: f.cfg.AppsNamespace, Stack: podspec.StackValue(f.cfg.Stack),
			Skip: r.never, Every: minBeat, Log: log,
		})
		if err == nil {
			fmt.Fprintln(say, "tidegate dev: hosted apps run on this machine, each under bwrap as user 1000")
			ws.wg.Go(func() { runner.Run(ctx) })
			return nil
		}
		log.ErrorContext(ctx, "hosted apps cannot run on this machine; registering their hosts on their behalf", "error", err)
		fmt.Fprintf(say, registersInstead, err)
	}
	ws.wg.Go(func() { r.run(ctx, every) })
	return nil
}

// registersInstead is what `tidegate dev` prints when hosted apps cannot run on this machine.
const registersInstead = `tidegate dev: WARNING: hosted apps will not run on this machine: %v
tidegate dev: WARNING: their hosts are registered on their behalf once their pods are Running; no app code runs and their logs are kwok's
`
