package handlers

import (
	"context"
	"log/slog"
	"os"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/tidegate/tidegate/shared/config"
)

// FromLambdaEnv is what every function starts from: the configuration read from the environment,
// the SDK clients and the logger. When the configuration is invalid it logs why and exits non-zero,
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
	return cfg, NewClients(awsCfg, cfg), Logger(cfg, os.Stdout)
}

// InitFailed logs to stderr as JSON, as CloudWatch wants: the configured logger may not exist yet.
func InitFailed(function string, err error) {
	slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error(function+" cannot start", "err", err)
	os.Exit(1)
}
