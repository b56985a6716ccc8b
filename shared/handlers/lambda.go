package handlers

import (
	"context"
	"log/slog"
	"os"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/metrics"
)

// FromLambdaEnv is what every function starts from: the configuration read from the environment,
// the SDK clients, a metrics recorder writing EMF lines to the log (stdout, as CloudWatch reads
// them) and the logger. When the configuration is invalid it logs why and exits non-zero,
// which Lambda reports as an init error naming the function.
func FromLambdaEnv(ctx context.Context, function string) (config.Config, Clients, *slog.Logger) {
	cfg, err := config.FromEnv()
	if err != nil {
		InitFailed(function, err)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		InitFailed(function, err)
	}
	clients := NewClients(awsCfg, cfg)
	clients.Metrics = metrics.NewRecorder(os.Stdout, time.Now)
	return cfg, clients, Logger(cfg, os.Stdout)
}

// InitFailed logs to stderr as JSON, as CloudWatch wants: the configured logger may not exist yet.
func InitFailed(function string, err error) {
	slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error(function+" cannot start", "err", err)
	os.Exit(1)
}
