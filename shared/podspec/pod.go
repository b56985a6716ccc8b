package podspec

import (
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/apps"
)

// DefaultImage runs a Launch that names none: Node.js with npm and corepack (so pnpm and
// yarn), as the hosted apps so far are JavaScript. A Python release needs an image with
// python3, and uv or poetry for their lockfiles.
const DefaultImage = "docker.io/library/node:22-bookworm-slim"

// RuntimeClass is the gVisor runtime every host runs under; each hosting cluster has it.
const RuntimeClass = "gvisor"

// The two containers, by name, for reading a host's logs: the app's, or the install's when the
// app never got to run.
const (
	InstallContainer = "install"
	AppContainer     = "app"
)

// InstallLimit is how long the install may take: it runs the org's own install scripts, and
// five minutes covers a cold npm ci of a large app. The beat gives a host this much on top of
// its time to register.
const InstallLimit = 300 * time.Second

// Resources. Requests equal limits, so a host gets what it is capped at and no more.
var (
	// An idle app measured 72 MB under gVisor; 256Mi leaves room for a burst.
	appMemory = resource.MustParse("256Mi")
	// The install runs package managers that hold a whole dependency tree in memory.
	installMemory = resource.MustParse("1Gi")
	// Half a core each: hosts are many and mostly wait on the network.
	hostCPU = resource.MustParse("500m")
	// The unpacked sources with their dependencies, and the install's caches.
	appDirSize  = resource.MustParse("1Gi")
	homeDirSize = resource.MustParse("1Gi")
	// The one writable place the app has; a tmpfs, so it counts against the pod's memory.
	scratchSize = resource.MustParse("64Mi")
)

const (
	// hostUser is the node image's own non-root user; both containers run as it, so what the
	// install writes the app can read.
	hostUser = 1000
	// drainSeconds is a host's time between SIGTERM and the kill, as the runner this comes from
	// measured it: about 10 s for the gateway to move connections off, 30 s for the slowest
	// call in flight to end, and a margin.
	drainSeconds = 45

	appDir     = "/app"
	installDir = "/home/app"
	scratchDir = "/scratch"
)

// resolvers are public DNS servers, so an app cannot look up the cluster's own services by name.
var resolvers = []string{"1.1.1.1", "8.8.8.8"}

// Pod is l's host: gVisor, no service-account token, public resolvers, non-root with a
// read-only root and nothing writable but its scratch; its install container fetches and
// installs the sources, then the app container runs them with the environment of
// Secret(l). The pod holds no secret value.
func Pod(l Launch) (*corev1.Pod, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	image := l.Image
	if image == "" {
		image = DefaultImage
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: objectMeta(l, l.Host),
		Spec: corev1.PodSpec{
			RuntimeClassName: ptr.To(RuntimeClass),
			// The beat revives a host that exits, counting its crashes; the kubelet must not.
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](drainSeconds),
			Hostname:                      l.Host,
			DNSPolicy:                     corev1.DNSNone,
			DNSConfig:                     &corev1.PodDNSConfig{Nameservers: slices.Clone(resolvers)},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](hostUser),
				RunAsGroup:     ptr.To[int64](hostUser),
				FSGroup:        ptr.To[int64](hostUser),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Volumes: []corev1.Volume{
				{Name: "app", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(appDirSize)}}},
				{Name: "home", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(homeDirSize)}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(scratchSize)}}},
			},
			InitContainers: []corev1.Container{installContainer(l, image)},
			Containers:     []corev1.Container{appContainer(l, image)},
		},
	}, nil
}

// installContainer fetches l's sources into the app volume and installs their dependencies,
// with more memory than the app and under InstallLimit.
func installContainer(l Launch, image string) corev1.Container {
	c := corev1.Container{
		Name:  InstallContainer,
		Image: image,
		Command: []string{"sh", "-c", timedInstall, "tidegate-install",
			strconv.Itoa(int(InstallLimit / time.Second)), installScript},
		Env: []corev1.EnvVar{
			{Name: "HOME", Value: installDir},
			{Name: "TMPDIR", Value: scratchDir},
			{Name: "TIDEGATE_APP_DIR", Value: appDir},
			{Name: "TIDEGATE_SOURCES_URL", Value: l.SourcesURL},
			{Name: "TIDEGATE_SOURCES_SHA256", Value: l.SourcesSHA256},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "app", MountPath: appDir},
			{Name: "home", MountPath: installDir},
			{Name: "scratch", MountPath: scratchDir},
		},
	}
	finish(&c, installMemory)
	return c
}

// appContainer runs l's start command over the installed sources, read-only, with the
// environment of l's Secret.
func appContainer(l Launch, image string) corev1.Container {
	c := corev1.Container{
		Name:       AppContainer,
		Image:      image,
		Command:    append([]string{"sh", "-c", startScript, "tidegate-start"}, l.Command...),
		WorkingDir: appDir,
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(l.Host)},
		}}},
		// Env wins over EnvFrom, so an org's secret cannot move HOME or TMPDIR off the scratch.
		// The register URL names this pod's UID (the kubelet expands $(TIDEGATE_POD_UID)), so
		// the process registers this pod and a pod of the host started again is not live until
		// its own process registers.
		Env: []corev1.EnvVar{
			{Name: "HOME", Value: scratchDir},
			{Name: "TMPDIR", Value: scratchDir},
			{Name: "NO_COLOR", Value: "1"},
			{Name: EnvPodUID, ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.uid"}}},
			{Name: EnvRegisterURL, Value: RegisterURLOf(l.RegisterURL, "$("+EnvPodUID+")")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "app", MountPath: appDir, ReadOnly: true},
			{Name: "scratch", MountPath: scratchDir},
		},
	}
	c.ReadinessProbe = readinessProbe(l.Ready)
	finish(&c, appMemory)
	return c
}

// How often a host's readiness check runs, how long one may take, and how many failures in a row
// turn its pod's Ready condition False: 30 s of failing before the beat starts timing it
// (hostplan.MinUnreadyLimit is no shorter, so one bad answer never revives a host). The kubelet
// runs the check inside the node; it costs no call to AWS or to the API server beyond the status
// the beat's LIST already reads.
const (
	readyPeriodSeconds  = 10
	readyTimeoutSeconds = 5
	readyFailures       = 3
)

// readinessProbe is the app container's probe for r: an HTTP GET of r.Path on r.Port, or r.Exec
// run as is in the container; nil for none.
func readinessProbe(r *apps.Ready) *corev1.Probe {
	if r == nil {
		return nil
	}
	p := &corev1.Probe{
		PeriodSeconds: readyPeriodSeconds, TimeoutSeconds: readyTimeoutSeconds,
		FailureThreshold: readyFailures, SuccessThreshold: 1,
	}
	if len(r.Exec) > 0 {
		p.Exec = &corev1.ExecAction{Command: slices.Clone(r.Exec)}
	} else {
		p.HTTPGet = &corev1.HTTPGetAction{Path: r.Path, Port: intstr.FromInt32(int32(r.Port)), Scheme: corev1.URISchemeHTTP}
	}
	return p
}

// finish gives a container what both have in common: locked down, capped at memory and
// hostCPU, and its last log lines as its termination message when it fails, so the beat can
// say why from the pod's status alone.
func finish(c *corev1.Container, memory resource.Quantity) {
	caps := corev1.ResourceList{corev1.ResourceMemory: memory, corev1.ResourceCPU: hostCPU}
	c.Resources = corev1.ResourceRequirements{Requests: caps, Limits: caps.DeepCopy()}
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	c.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](hostUser),
		RunAsGroup:               ptr.To[int64](hostUser),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Privileged:               ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
