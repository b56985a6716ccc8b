package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/dev/devstack"
)

func devPricesCmd(dir *string) *cobra.Command {
	cmd := &cobra.Command{Use: "prices", Short: "Set the spot prices the dev stack's EC2 endpoint answers"}
	cmd.AddCommand(devPricesGetCmd(dir), &cobra.Command{
		Use:     "set REGION INSTANCE_TYPE PRICE",
		Short:   "Set the spot price of an instance type in every zone of a region",
		Example: "  tidegate dev prices set us-east-1 g5.xlarge 0.42",
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			price, err := strconv.ParseFloat(args[2], 64)
			if err != nil || math.IsNaN(price) || math.IsInf(price, 0) || price <= 0 {
				return fmt.Errorf("PRICE %q is not a number of dollars an hour, such as 0.42", args[2])
			}
			st, err := devstack.ReadState(*dir)
			if err != nil {
				return err
			}
			body, _ := json.Marshal(map[string]any{"region": args[0], "instance_type": args[1], "price": price})
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPut, st.PricesURL+"/prices", bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				return fmt.Errorf("reaching the dev price endpoint (is `tidegate dev` running?): %w", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				var e struct{ Detail string }
				if json.Unmarshal(msg, &e) == nil && e.Detail != "" {
					return fmt.Errorf("setting the price: %s", e.Detail)
				}
				return fmt.Errorf("setting the price: %s: %s", resp.Status, bytes.TrimSpace(msg))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s spot price set to $%s/h in every zone\n", args[0], args[1], strconv.FormatFloat(price, 'f', -1, 64))
			return nil
		},
	})
	return cmd
}

func devPricesGetCmd(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "get REGION INSTANCE_TYPE",
		Short: "Read the spot price through EC2's DescribeSpotPriceHistory, as dispatch does",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := devstack.ReadState(*dir)
			if err != nil {
				return err
			}
			client := ec2.New(ec2.Options{
				Region:       args[0],
				BaseEndpoint: aws.String(st.PricesURL),
				Credentials:  credentials.NewStaticCredentialsProvider("tidegate", "tidegate", ""),
			})
			out, err := client.DescribeSpotPriceHistory(cmd.Context(), &ec2.DescribeSpotPriceHistoryInput{
				InstanceTypes:       []ec2types.InstanceType{ec2types.InstanceType(args[1])},
				ProductDescriptions: []string{"Linux/UNIX"},
				StartTime:           aws.Time(time.Now()),
			})
			if err != nil {
				return fmt.Errorf("DescribeSpotPriceHistory: %w", err)
			}
			if len(out.SpotPriceHistory) == 0 {
				return fmt.Errorf("no spot price for %s in %s; set one with `tidegate dev prices set`", args[1], args[0])
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ZONE\tINSTANCE TYPE\tPRICE\tSINCE")
			for _, p := range out.SpotPriceHistory {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", aws.ToString(p.AvailabilityZone), p.InstanceType, aws.ToString(p.SpotPrice), aws.ToTime(p.Timestamp).Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
}
