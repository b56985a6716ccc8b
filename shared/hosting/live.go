package hosting

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/podspec"
)

// startLive starts a's live host again, its pod lost (its node gone, the pod deleted) while
// another release is wanted, so that the app keeps serving until the wanted host registers. The
// app's record holds the wanted release's sources and launch, so the live release's own are read
// now, one GetItem for this app alone: a beat where no live host is lost reads nothing more. The
// start is recorded as a crash of the host first, as a revive's is, so a live host whose pods
// keep vanishing stops being started after hostplan.MostCrashes.
//
// The pod is created beside the Secret the host ran with, which outlives its pod: the org's
// secrets its name was made for, and its token. Only when that Secret is gone too is one written,
// from the org's secrets now.
func (h *Hoster) startLive(ctx context.Context, w *world, a apps.App) error {
	host := a.LiveHost
	rel, err := h.Apps.Release(ctx, a.Org, a.Name, a.LiveRelease)
	if err != nil {
		return fmt.Errorf("reading release %d, which host %s runs: %w", a.LiveRelease, host, err)
	}
	if err := h.Apps.RecordCrash(ctx, a.Org, a.Name, host, h.now()); err != nil {
		return err
	}
	live := a
	live.Release, live.SHA256, live.Launch = rel.Number, rel.SHA256, rel.Launch
	url, err := h.Sources.PresignSources(ctx, rel.SHA256)
	if err != nil {
		return fmt.Errorf("presigning release %d's sources: %w", rel.Number, err)
	}
	token, err := w.cluster.hostToken(ctx, host)
	if err != nil {
		return err
	}
	if token == "" {
		if token, err = h.putLiveSecret(ctx, w, live, url); err != nil {
			return err
		}
	}
	l, err := h.launch(live, host, url, token, nil)
	if err != nil {
		return err
	}
	pod, err := podspec.Pod(l)
	if err != nil {
		return err
	}
	h.log().WarnContext(ctx, "the live host's pod was lost; starting it again", "app", a.Org+"/"+a.Name, "host", host, "release", rel.Number, "wanted_release", a.Release)
	return w.cluster.startPod(ctx, pod)
}

// putLiveSecret writes the Secret of live's host, the live one, whose Secret is gone with its pod,
// and answers the token it holds. The token is fresh and recorded nowhere: the host went live
// already and never needs to register again, and the app takes a registration only from the host
// its current token was minted for, the wanted one. Minting one for the live host would take that
// from the wanted host, which could then never go live.
func (h *Hoster) putLiveSecret(ctx context.Context, w *world, live apps.App, sourcesURL string) (string, error) {
	env, err := h.environment(ctx, live.Org)
	if err != nil {
		return "", err
	}
	b := make([]byte, unrecordedTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading randomness for a host token: %w", err)
	}
	token := "tgh_" + base64.RawURLEncoding.EncodeToString(b)
	l, err := h.launch(live, live.LiveHost, sourcesURL, token, env)
	if err != nil {
		return "", err
	}
	secret, err := podspec.Secret(l)
	if err != nil {
		return "", err
	}
	return token, w.cluster.putSecret(ctx, secret)
}

// unrecordedTokenBytes is the randomness of a token nobody can register with: as many bytes as a
// minted one has, so that it looks like one.
const unrecordedTokenBytes = 32

// hostToken answers the token in host's Secret, or "" when the Secret is gone. Another
// deployment's Secret of the name is refused.
func (c cluster) hostToken(ctx context.Context, host string) (string, error) {
	s, err := c.kc.CoreV1().Secrets(c.namespace).Get(ctx, podspec.SecretName(host), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading Secret %s: %w", podspec.SecretName(host), err)
	}
	if err := c.notOthers(&s.ObjectMeta, "Secret"); err != nil {
		return "", err
	}
	return string(s.Data[podspec.EnvHostToken]), nil
}
