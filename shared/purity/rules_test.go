package purity

const module = "github.com/tidegate/tidegate/"

// reach is what no decision may depend on, however indirectly: the network, AWS, a cluster, or a
// context to cancel a call. A prefix ending in "/" covers a whole tree.
var reach = []string{
	"context", "net", "net/http",
	"github.com/aws/", "github.com/awslabs/",
	"k8s.io/", "sigs.k8s.io/",
}

// clients is what a package that builds Kubernetes objects may still not depend on: a client of
// the cluster or of AWS.
var clients = []string{
	"k8s.io/client-go/", "sigs.k8s.io/controller-runtime/",
	"github.com/aws/", "github.com/awslabs/",
}

// pure lists each pure package with what it must not depend on, however indirectly.
var pure = map[string][]string{
	"shared/admission":    reach,
	"shared/apps":         reach,
	"shared/capacitytype": reach,
	"shared/costing":      reach,
	"shared/deliveryplan": reach,
	"shared/hostplan":     reach,
	"shared/jobs":         reach,
	"shared/manifest":     reach,
	"shared/metrics":      reach,
	"shared/ratelimit":    reach,
	"shared/secretbox":    reach,
	"shared/signing":      reach,
	"shared/spotgate":     reach,
	"shared/templating":   reach,
	"shared/tenancy":      reach,
	// podspec builds Kubernetes objects, so k8s.io/api and k8s.io/apimachinery (which bring
	// context and net/http along) are its to use; a client of the cluster or of AWS is not.
	"shared/podspec": clients,
	// policy decodes manifests into k8s.io/api types and judges pods with the upstream Pod
	// Security evaluator (k8s.io/pod-security-admission), which bring apimachinery, klog,
	// component-base, context and net/http along; a client of the cluster or of AWS is not.
	"shared/policy": clients,
	// demand counts pods as the kube-scheduler does, in k8s.io/api's pod spec and apimachinery's
	// quantities; a client of the cluster or of AWS is not its.
	"shared/demand": clients,
	// isolation builds NetworkPolicies, ResourceQuotas and LimitRanges (k8s.io/api) and compares
	// them as the API server does (apimachinery's equality); a client of the cluster is not its.
	"shared/isolation": clients,
}

// leanOn is what of Tidegate's own, besides other pure packages (each held to its own rules
// here), a pure package may depend on: the event catalogue and the ids that the job lifecycle
// needs. Any other Tidegate package could carry I/O past podspec's and policy's rules, which let
// net/http in with k8s.io/api.
var leanOn = []string{"shared/ids", "shared/outbox"}

// own is what a pure package's own files must not import, whatever its dependencies bring along:
// k8s.io/api needs context and net/http, podspec and policy do not. os is refused whole rather
// than call by call, because all it offers is the world outside the arguments (the environment,
// files, processes, the command line, the standard streams, the host name); what a pure package
// needs of it reaches it as an argument, read once by main into the config.
var own = []string{
	"context", "net", "net/http", "net/http/", "net/rpc", "net/rpc/", "net/smtp",
	"os", "os/", "syscall",
}

// outside is each use of "time" and "os" that reads the clock or the environment, with what it
// reads. A pure function is given now by its caller, and its settings as arguments. The os ones
// are refused with the import already (own); listing them names the line as well.
var outside = map[string]string{
	"time.Now":          "reads the clock",
	"time.Since":        "reads the clock",
	"time.Until":        "reads the clock",
	"time.After":        "waits on the clock",
	"time.AfterFunc":    "waits on the clock",
	"time.Tick":         "waits on the clock",
	"time.NewTimer":     "waits on the clock",
	"time.NewTicker":    "waits on the clock",
	"time.Sleep":        "waits on the clock",
	"time.Local":        "reads the local time zone",
	"time.LoadLocation": "reads the time zone database",
	"os.Getenv":         "reads the environment",
	"os.LookupEnv":      "reads the environment",
	"os.Environ":        "reads the environment",
}
