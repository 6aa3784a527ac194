package webhook

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Options configure the served webhook.
type Options struct {
	// Host and Port are where it listens (Host "": every address).
	Host string
	Port int
	// CertDir holds tls.crt and tls.key (mounted from a Secret that
	// cert-manager fills, or written by the rotator).
	CertDir string
	// Rotation, when set, makes the certificates here: a CA and a serving
	// certificate kept in a Secret and rotated before they expire
	// (github.com/open-policy-agent/cert-controller), the CA injected into
	// the webhook configuration.
	Rotation *Rotation
}

// Rotation names what self-managed certificates need.
type Rotation struct {
	// Secret is the Secret holding the CA and the serving certificate.
	Secret types.NamespacedName
	// Service is the webhook's Service (the certificate's DNS name is
	// <service>.<namespace>.svc), in Secret's namespace.
	Service string
	// WebhookConfiguration is the ValidatingWebhookConfiguration whose
	// caBundle is set.
	WebhookConfiguration string
}

// Serve adds the webhook to the manager: its HTTPS server (every replica
// serves it, leader or not), a readiness check that passes once the
// server is started and ready() holds, and, with Rotation, the certificate
// rotator; the server then starts once the certificates are there.
func Serve(mgr manager.Manager, src Source, ready func() bool, o Options) error {
	if o.Port <= 0 {
		return errors.New("webhook: no port")
	}
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: o.Host, Port: o.Port, CertDir: o.CertDir})
	srv.Register(Path, &admission.Webhook{Handler: &Handler{Source: src}})
	started := srv.StartedChecker()
	certsReady := make(chan struct{})
	check := func(r *http.Request) error {
		select {
		case <-certsReady:
		default:
			return errors.New("webhook certificates not ready yet")
		}
		if !ready() {
			return errors.New("webhook state not computed yet")
		}
		return started(r)
	}
	if err := mgr.AddReadyzCheck("webhook", check); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	if o.Rotation == nil {
		close(certsReady)
		return mgr.Add(srv)
	}
	r := o.Rotation
	if err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      r.Secret,
		CertDir:        o.CertDir,
		CAName:         "attache-webhook-ca",
		CAOrganization: "attache",
		DNSName:        fmt.Sprintf("%s.%s.svc", r.Service, r.Secret.Namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", r.Service, r.Secret.Namespace)},
		IsReady:        certsReady,
		Webhooks:       []rotator.WebhookInfo{{Name: r.WebhookConfiguration, Type: rotator.Validating}},
		// Every replica serves the webhook, so every one needs the
		// certificates: the rotator runs everywhere (writes conflict
		// harmlessly and are retried).
		RequireLeaderElection: false,
	}); err != nil {
		return fmt.Errorf("webhook: certificate rotation: %w", err)
	}
	go func() {
		<-certsReady
		if err := mgr.Add(srv); err != nil {
			mgr.GetLogger().Error(err, "starting the webhook server")
		}
	}()
	return nil
}
