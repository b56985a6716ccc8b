// Command hello is the cold-start floor: the smallest aws-lambda-go function there is, answering
// every event with a constant. The cold-start benchmark measures Tidegate's functions against it.
package main

import "github.com/aws/aws-lambda-go/lambda"

func main() {
	lambda.Start(func() (string, error) { return "hello", nil })
}
