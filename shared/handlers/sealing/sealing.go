// Package sealing wires the keyring that seals secrets at rest for the functions that seal or open
// them (the API, the beat and the webhook function). It is apart from shared/handlers so that a
// function without secrets, dispatch or the key authorizer, links no KMS client.
package sealing

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/keyring"
)

// Keyring seals and opens what Tidegate keeps secret at rest, under data keys that cfg's KMS key
// wraps, kept in the control table; its KMS client goes to cfg's KMS endpoint. The API and the
// beat need one and refuse to start without it.
func Keyring(cfg config.Config, c handlers.Clients) (*keyring.Ring, error) {
	if cfg.KMSKey == "" {
		return nil, fmt.Errorf("%s is not set; the API and the beat seal orgs' secrets under data keys from that KMS key (its ARN or alias)", config.EnvKMSKey)
	}
	client := kms.NewFromConfig(c.AWS, func(o *kms.Options) { o.BaseEndpoint = handlers.Endpoint(cfg.Endpoints.KMS) })
	return keyring.New(client, c.DynamoDB, cfg.ControlTable, cfg.KMSKey)
}
