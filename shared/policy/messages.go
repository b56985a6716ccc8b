package policy

// Messages a user reads, kept together. Each says what is wrong and what to change; the field
// it is about travels next to it in the Violation.
const (
	msgEmptyDocument = "the document is empty: give it apiVersion, kind and metadata"
	msgNoAPIVersion  = "apiVersion is missing: set it, e.g. batch/v1"
	msgNoKind        = "kind is missing: set it, e.g. Job"
	msgNoName        = "the manifest has no name: set metadata.name (or metadata.generateName)"
	msgMoreErrors    = "%d more problems like the ones above were not listed: fix those and submit again"

	msgKindNotAllowed = "%s is not allowed here: use one of %s"
	msgKindNever      = "%s is never allowed: it is %s, and tenants may not create those; use one of %s"
	msgNeverEnds      = "a %s never ends, and this job ends when %s does, which deletes everything it applied: submit the %s as a job of its own (with only Deployments and StatefulSets, and their ConfigMaps and Services, it is long-running), or remove it"
	msgPodNeverEnds   = "a Pod whose restartPolicy is Always (Kubernetes' default) never ends, and this job ends when %s does, which deletes everything it applied: set spec.restartPolicy to Never or OnFailure, or submit the Pod as a job of its own"

	msgNoNamespace              = "no namespace: set metadata.namespace or the request's namespace"
	msgNamespaceNotYours        = "namespace %q is not one of this tenant's: use one of %q"
	msgDefaultNamespaceNotYours = "the request's namespace %q is not one of this tenant's: use one of %q"
	msgNamespaceReserved        = "%s, whatever the tenant's record says: use one of %q"

	msgTidegateKey     = "%s key %q is Tidegate's own (tidegate.io/ and its subdomains): Tidegate sets and reads these keys on what it applies, to know a job's objects, attempt and deployment: remove it"
	msgFinalizers      = "finalizers keep an object from being deleted until a controller removes them, and none of this cluster's controllers removes one a manifest names: the object would stay Terminating after the job ends, holding its name and its namespace; remove finalizers"
	msgOwnerReferences = "ownerReferences tie the object's life to another object's, which may be another job's (deleting that would delete this, or this could hold it up): remove ownerReferences; Tidegate deletes a job's objects when it ends"

	msgWrongType    = "must be %s, not %s"
	msgOutOfRange   = "%d is out of range for this field"
	msgUnknownField = "unknown field %q: remove it or correct its spelling"
	msgQuantity     = "%q is not a quantity: write one such as 500m, 2, 512Mi or 4Gi"

	msgServiceType        = "Service type %q is not allowed: remove spec.type or set it to ClusterIP"
	msgSecretType         = "a Secret of type %s would receive a service account's token: use type Opaque"
	msgServiceExternalIPs = "a Service may not claim external IPs (it could intercept other tenants' traffic): remove spec.externalIPs"

	msgName               = "name %q would be refused by Kubernetes: %s"
	msgGenerateName       = "generateName %q would be refused by Kubernetes: %s"
	msgJobNameLabel       = "the name has %d characters, and a Job's name becomes its pods' job-name label, which holds at most %d: shorten it"
	msgIndexedJobName     = "an Indexed Job's pods are named after it with -<index>, and %q would be refused by Kubernetes: %s; choose a shorter name without dots, or fewer completions"
	msgCronJobName        = "the name has %d characters, and a CronJob's name may have at most %d (its jobs add 11 to it): shorten it"
	msgLabelKey           = "label key %q would be refused by Kubernetes: %s"
	msgLabelValue         = "label value %q would be refused by Kubernetes: %s"
	msgAnnotationKey      = "annotation key %q would be refused by Kubernetes: %s"
	msgAnnotationsSize    = "the annotations take %d bytes, over Kubernetes' limit of %d for all of an object's annotations: move large values into a ConfigMap"
	msgRestartPolicy      = "restartPolicy %q is not allowed for a %s: set it to %s"
	msgRestartPolicyUnset = "restartPolicy is unset, which means Always, and that is not allowed for a %s: set it to %s"
	msgContainerNoName    = "the container has no name: set name to a lower-case DNS label such as main"
	msgContainerName      = "container name %q would be refused by Kubernetes: %s"
	msgContainerDuplicate = "another container or init container of this pod is already named %q: give each its own name"
	msgPortName           = "port name %q would be refused by Kubernetes: %s"
	msgPortDuplicate      = "another port of this container is already named %q: give each its own name"
	msgEnvName            = "environment variable name %q would be refused by Kubernetes: %s"
	msgImageRequired      = "the container has no image, and Kubernetes refuses a container without one: set image to the image it runs, e.g. ghcr.io/acme/train:1.0"
	msgImageSpace         = "image %q has white space around it, which Kubernetes refuses: remove it"
	msgResourceNoLimit    = "%s is requested (%s) without a limit, and Kubernetes refuses that for a resource it cannot overcommit (\"Limit must be set for non overcommitable resources\"): set resources.limits[%s] to %s, or set only the limit, which the request then defaults to"
	msgResourceUnequal    = "%s is requested at %s but limited to %s, and Kubernetes refuses that for a resource it cannot overcommit (\"must be equal to %s limit of %s\"): make the request equal to the limit, or set only the limit, which the request then defaults to"

	msgNegativeQuantity      = "%s is %s, and Kubernetes refuses a negative quantity (\"must be greater than or equal to 0\"): make it zero or more"
	msgNegativeCount         = "%d is negative, and Kubernetes refuses that (\"must be greater than or equal to 0\"): make it zero or more"
	msgCronJobConcurrency    = "concurrencyPolicy Allow lets the CronJob's runs overlap, so what it runs at once has no bound: set it to Forbid (a run waits for the last to end) or Replace (a run replaces the last), or remove it for Forbid"
	msgDaemonSetDemand       = "a DaemonSet runs a pod on every node its pods fit, so what it asks of the cluster cannot be counted at submission: run a Deployment with replicas instead"
	msgDemandTooLarge        = "the pod's %s request times the %d pods run at once is too large to count (past 2^63 of the scheduler's units): lower the request or the pods run at once"
	msgNodeSelectorsDisagree = "the job's pods select %[1]s=%[2]s and %[1]s=%[3]s: a job runs on one flavor of nodes, whose labels all its pods get, so give its pods the same node selector"
	msgJobDemandTooLarge     = "the job's manifests ask for more %s in all than can be counted (past 2^63 of the scheduler's units): lower their requests or the pods they run at once"

	msgDataKey      = "key %q would be refused by Kubernetes: %s"
	msgDataKeyTwice = "key %q is also in %s: keep it in one of the two"

	msgServicePortNoName    = "a Service with several ports must name each of them: set name, e.g. http"
	msgServicePortName      = "Service port name %q would be refused by Kubernetes: %s"
	msgServicePortDuplicate = "another port of this Service is already named %q: give each its own name"

	msgNodeName          = "nodeName %q puts the pod on a node directly, skipping the scheduler and the taints that keep tenants' pods off nodes not meant for them: remove nodeName and use nodeSelector or affinity"
	msgTolerationAll     = "a toleration without a key tolerates every taint, including those that keep tenants' pods off nodes not meant for them: %s"
	msgToleration        = "tolerating taint %q is not allowed (taints keep tenants' pods off nodes not meant for them): %s"
	msgPriorityClass     = "priority class %q is not allowed (a higher priority preempts other tenants' pods): %s"
	msgRuntimeClass      = "runtime class %q is not allowed (a runtime class brings its nodes' tolerations, and runs the pod under a runtime chosen for others): %s"
	msgServiceAccount    = "service account %q is not allowed (it may hold permissions meant for another workload): %s"
	msgAutomountToken    = "automountServiceAccountToken true gives the pod credentials for the cluster's API: remove it or set it to false"
	msgCSIDriver         = "inline CSI volume %q uses driver %q, which is not allowed (an inline CSI volume mounts whatever its driver serves, with the driver's credentials rather than the tenant's): %s"
	msgNodeSelectorKey   = "selecting nodes by label %q is not allowed (it could pick the operator's own nodes, or have the autoscaler buy the costliest instance type): %s"
	msgNodeSelectorField = "selecting nodes by field %q (a node's name) puts the pod on a node directly, past the taints that keep tenants' pods off nodes not meant for them: remove this requirement and select nodes by label"
	msgPodAffinityNS     = "the term names namespace %q, and a pod may place itself only by pods of its own namespace (%q), never beside or away from another tenant's: remove it"
	msgPodAffinityNSSel  = "a namespaceSelector (even {}, which is every namespace) places the pod by other namespaces' pods, which may be another tenant's: remove namespaceSelector, and the term then looks at the pod's own namespace"
	msgProjectedToken    = "a projected serviceAccountToken gives the pod credentials for the cluster's API: remove this source"
	msgEmptyDirNoLimit   = "emptyDir volume %q has no sizeLimit, so it can fill its node's %s: set sizeLimit, e.g. 1Gi"
	msgEmptyDirZeroLimit = "emptyDir volume %q has a sizeLimit of %s, which Kubernetes takes as no limit: set sizeLimit above zero, e.g. 1Gi"
	msgEmptyDirOverCap   = "the pod's emptyDir volumes on disk may hold %s in all, up to and with volume %q, over the ephemeral storage cap of %s: lower their sizeLimit so that together they hold at most %s"
	msgClaimVolumeName   = "volumeName %q binds the claim to an existing PersistentVolume, which may hold another tenant's data: remove volumeName"
	msgClaimNoClass      = `storageClassName "" binds the claim to an existing PersistentVolume, which may hold another tenant's data: %s`
	msgClaimClass        = "storage class %q is not allowed: %s"
	msgClaimSize         = "the claim asks for %s of storage, over the cap of %s: ask for at most %s"

	msgCap       = "the pod asks for %s %s (%s), over the cap of %s: lower resources.requests and resources.limits so that the pod's total is at most %s"
	msgUntrusted = "image %q (%s) is not from a trusted registry: use an image under %s"
	msgNoImage   = "image is empty: set it to an image under %s"
)

// Pod Security messages. The subject is "the pod", `container "x"` or `containers "x", "y"`;
// every one ends with msgPodSecuritySuffix naming the upstream check that failed.
const (
	msgPodSecuritySuffix   = ` (Pod Security Standards "restricted": %s)`
	msgPodSecurityFallback = `the pod breaks the Pod Security Standards "restricted" profile: %s (%s)`

	msgPrivileged          = "%s runs privileged: remove securityContext.privileged or set it to false"
	msgHostNamespace       = "the pod shares the host's %s namespace: remove %s or set it to false"
	msgVolumeType          = "volume %q uses %s, which pods may not mount: use configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected or secret"
	msgVolumeNoSource      = "volume %q sets no volume source: give it one of configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected or secret"
	msgRunAsNonRootFalse   = "%s sets runAsNonRoot to false: set it to true"
	msgRunAsNonRootUnset   = "%s may run as root: set securityContext.runAsNonRoot to true for the pod (or in each of those containers)"
	msgRunAsUserRoot       = "%s sets runAsUser to 0 (root): set a non-zero UID such as 1000, or remove it"
	msgPrivilegeEscalation = "%s may gain privileges: set securityContext.allowPrivilegeEscalation to false"
	msgDropAll             = `%s keeps capabilities: set securityContext.capabilities.drop to ["ALL"]`
	msgAddCapability       = "%s adds capability %q: remove it (only NET_BIND_SERVICE may be added)"
	msgSeccompType         = "%s sets seccompProfile type %q: set it to RuntimeDefault or Localhost"
	msgSeccompUnset        = "%s run without a seccomp profile: set securityContext.seccompProfile.type to RuntimeDefault for the pod (or in each of those containers)"
	msgAppArmorType        = "%s sets AppArmor profile type %q: set it to RuntimeDefault or Localhost, or remove it"
	msgAppArmorAnnotation  = "the annotation sets AppArmor profile %q: use runtime/default or localhost/<profile>, or remove it"
	msgSELinuxType         = "%s sets SELinux type %q: use container_t, container_init_t, container_kvm_t or container_engine_t, or remove it"
	msgSELinuxUser         = "%s sets an SELinux user: remove it"
	msgSELinuxRole         = "%s sets an SELinux role: remove it"
	msgSysctl              = "sysctl %q is not one of the namespaced-safe sysctls a pod may set: remove it"
	msgHostPort            = "%s binds host port %d: remove hostPort and reach the pod through a Service"
	msgProcMount           = "%s sets procMount %q: remove it or set it to Default"
	msgProbeHost           = "%s sends its %s to host %q: remove host so that it goes to the pod's own IP"
	msgHostProcess         = "%s runs as a Windows host process: remove windowsOptions.hostProcess or set it to false"
)
