package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Operation names accepted by --workload and --mix.
const (
	OpPut    = "put"
	OpGet    = "get"
	OpDelete = "delete"
	OpList   = "list"
	OpStat   = "stat"
	OpMixed  = "mixed"
)

// Environment variables holding credentials. Credentials are never flags:
// argv is visible in ps and recorded in result files.
const (
	EnvS3AccessKey = "CEPHBENCH_S3_ACCESS_KEY"
	EnvS3SecretKey = "CEPHBENCH_S3_SECRET_KEY"
	EnvSwiftUser   = "CEPHBENCH_SWIFT_USER"
	EnvSwiftKey    = "CEPHBENCH_SWIFT_KEY"
)

// Credentials come from the environment only. String never shows a secret.
type Credentials struct {
	S3AccessKey string
	S3SecretKey string
	SwiftUser   string
	SwiftKey    string
}

func (Credentials) String() string   { return "Credentials{redacted}" }
func (Credentials) GoString() string { return "Credentials{redacted}" }

// Config is a validated run description.
type Config struct {
	Protocol      string
	Endpoint      string
	SwiftAuthURL  string
	Region        string
	Workload      string
	Mix           []Weighted[string]
	Sizes         []Weighted[int64]
	RangeSize     int64
	Buckets       int
	BucketPrefix  string
	KeyPrefix     string
	Objects       int
	Concurrency   int
	Duration      time.Duration
	Ops           int64
	Rate          float64
	Arrival       string
	Warmup        time.Duration
	Prefill       bool
	MaxErrorRatio float64
	Keep          bool
	UseExisting   bool
	Hold          bool // after setup and prefill, wait for the release (SIGUSR1) before warm-up and measuring
	Output        string
	Seed          int64
	Timeout       time.Duration

	Creds Credentials

	// Raw holds every flag as given or defaulted, for the "params" section.
	Raw map[string]string
}

// OpenLoop reports whether ops follow an arrival schedule (--rate).
func (c *Config) OpenLoop() bool { return c.Rate > 0 }

// MaxSize is the largest object size the run can write.
func (c *Config) MaxSize() int64 {
	var m int64
	for _, s := range c.Sizes {
		m = max(m, s.Value)
	}
	return m
}

// BucketName is the name of bucket/container i.
func (c *Config) BucketName(i int) string { return c.BucketPrefix + strconv.Itoa(i) }

// PrefillDefault tells whether a workload reads what it needs from a prefilled key space.
func PrefillDefault(workload string) bool { return workload != OpPut }

var validOps = map[string]bool{OpPut: true, OpGet: true, OpDelete: true, OpList: true, OpStat: true}

var (
	bucketRe = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	// Keys use unreserved URL characters only, so the S3 signature's
	// canonical path is the path as sent.
	keyRe = regexp.MustCompile(`^[A-Za-z0-9._~/-]*$`)
)

// Usage prints the run flags.
func Usage(w io.Writer) {
	fs, _ := newFlagSet()
	fmt.Fprintln(w, "usage: cephbench-loadgen run [flags]\n       cephbench-loadgen version\n\nrun flags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\ncredentials come only from the environment: %s, %s (s3); %s, %s (swift)\n",
		EnvS3AccessKey, EnvS3SecretKey, EnvSwiftUser, EnvSwiftKey)
}

type rawFlags struct {
	protocol, endpoint, swiftAuth, region, workload, mix, objectSize, sizeDist, rangeSize string
	bucketPrefix, keyPrefix, arrival, output, prefill                                     string
	buckets, objects, concurrency                                                         int
	ops                                                                                   int64
	seed                                                                                  int64
	rate, maxErr                                                                          float64
	duration, warmup, timeout                                                             time.Duration
	keep, useExisting, hold                                                               bool
}

func newFlagSet() (*flag.FlagSet, *rawFlags) {
	r := &rawFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&r.protocol, "protocol", "s3", "s3 or swift")
	fs.StringVar(&r.endpoint, "endpoint", "", "RGW base URL, e.g. http://127.0.0.1:8000 (required)")
	fs.StringVar(&r.swiftAuth, "swift-auth-url", "", "Swift auth v1 URL (default {endpoint}/auth/v1.0)")
	fs.StringVar(&r.region, "region", "us-east-1", "S3 region used for signing")
	fs.StringVar(&r.workload, "workload", "", "put|get|delete|list|stat|mixed (required)")
	fs.StringVar(&r.mix, "mix", "get:70,put:20,delete:10", "operation weights for --workload mixed")
	fs.StringVar(&r.objectSize, "object-size", "4KiB", "object size (B, KiB, MiB, GiB, KB, MB, GB; plain integer = bytes)")
	fs.StringVar(&r.sizeDist, "size-dist", "", "weighted object sizes, e.g. 4KiB:70,1MiB:30 (overrides --object-size)")
	fs.StringVar(&r.rangeSize, "range-size", "", "GET a byte range of this size at a random offset instead of the whole object")
	fs.IntVar(&r.buckets, "buckets", 1, "number of buckets/containers the objects are spread over")
	fs.StringVar(&r.bucketPrefix, "bucket-prefix", "", "bucket names are PREFIX+index (default cephbench-loadgen-<random>-)")
	fs.StringVar(&r.keyPrefix, "key-prefix", "obj-", "object names are PREFIX+8-digit index")
	fs.IntVar(&r.objects, "objects", 1000, "key space size (objects prefilled for get/stat/list/mixed/delete)")
	fs.IntVar(&r.concurrency, "concurrency", 16, "ops in flight (closed loop) or worker pool size (open loop)")
	fs.DurationVar(&r.duration, "duration", 0, "measured phase length, e.g. 30s")
	fs.Int64Var(&r.ops, "ops", 0, "measured phase length in operations")
	fs.Float64Var(&r.rate, "rate", 0, "open loop: target ops/s (latency counted from intended send time)")
	fs.StringVar(&r.arrival, "arrival", "constant", "open loop arrival process: constant or poisson")
	fs.DurationVar(&r.warmup, "warmup", 0, "run load this long before measuring (not counted)")
	fs.StringVar(&r.prefill, "prefill", "", "write the key space before the measured phase: true or false (default true except for put)")
	fs.Float64Var(&r.maxErr, "max-error-ratio", 0.01, "stop when errors/attempts exceeds this after 100 ops")
	fs.BoolVar(&r.hold, "hold", false, "after setup and prefill print '@cephbench held_ns=<ns>' and wait for SIGUSR1 before warm-up and measuring (the start barrier across client hosts)")
	fs.BoolVar(&r.keep, "keep", false, "do not remove the objects and buckets the run created")
	fs.BoolVar(&r.useExisting, "use-existing", false, "use buckets that already exist (never deleted)")
	fs.StringVar(&r.output, "output", "-", "write the JSON result to this file (- = stdout)")
	fs.Int64Var(&r.seed, "seed", 1, "random seed for key and size choice")
	fs.DurationVar(&r.timeout, "timeout", 30*time.Second, "per-request timeout")
	return fs, r
}

// ErrHelp is returned by Parse when -h/--help was asked for.
var ErrHelp = flag.ErrHelp

// Parse parses the flags of "run" and the credentials in env (a getenv
// function). All errors are *UsageError, except ErrHelp.
func Parse(args []string, getenv func(string) string) (*Config, error) {
	fs, r := newFlagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, flagError(err)
	}
	if fs.NArg() > 0 {
		return nil, Usagef(fs.Arg(0), "all settings are flags; run 'cephbench-loadgen run --help'", "unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	c := &Config{
		Protocol: strings.ToLower(r.protocol), Region: r.region, Workload: strings.ToLower(r.workload),
		Buckets: r.buckets, KeyPrefix: r.keyPrefix, Objects: r.objects, Concurrency: r.concurrency,
		Duration: r.duration, Ops: r.ops, Rate: r.rate, Arrival: strings.ToLower(r.arrival), Warmup: r.warmup,
		MaxErrorRatio: r.maxErr, Keep: r.keep, Hold: r.hold, UseExisting: r.useExisting, Output: r.output, Seed: r.seed,
		Timeout: r.timeout,
	}
	if c.Protocol != "s3" && c.Protocol != "swift" {
		return nil, Usagef("--protocol", "use s3 or swift", "unknown protocol %q", r.protocol)
	}
	if err := c.parseEndpoint(r); err != nil {
		return nil, err
	}
	switch c.Workload {
	case "":
		return nil, Usagef("--workload", "give one of put, get, delete, list, stat, mixed", "no workload given")
	case OpPut, OpGet, OpDelete, OpList, OpStat:
	case OpMixed:
		mix, err := ParseWeights(r.mix, func(name string) (string, error) {
			n := strings.ToLower(name)
			if !validOps[n] {
				return "", fmt.Errorf("unknown operation %q", name)
			}
			return n, nil
		})
		if err != nil {
			return nil, Usagef("--mix", "write OP:WEIGHT,... with ops put, get, delete, list, stat and weights summing above zero, e.g. get:70,put:20,delete:10", "bad mix %q: %v", r.mix, err)
		}
		c.Mix = mix
	default:
		return nil, Usagef("--workload", "give one of put, get, delete, list, stat, mixed", "unknown workload %q", r.workload)
	}
	if set["mix"] && c.Workload != OpMixed {
		return nil, Usagef("--mix", "add --workload mixed or drop --mix", "--mix is only used by the mixed workload")
	}
	if r.sizeDist != "" {
		sizes, err := ParseWeights(r.sizeDist, ParseSize)
		if err != nil {
			return nil, Usagef("--size-dist", "write SIZE:WEIGHT,... e.g. 4KiB:70,1MiB:30 (units B, KiB, MiB, GiB, KB, MB, GB)", "bad size distribution %q: %v", r.sizeDist, err)
		}
		if set["object-size"] {
			return nil, Usagef("--object-size", "give --object-size or --size-dist, not both", "conflicting size flags")
		}
		c.Sizes = sizes
	} else {
		n, err := ParseSize(r.objectSize)
		if err != nil {
			return nil, Usagef("--object-size", "use e.g. 4KiB, 1MiB, 4096 (units B, KiB, MiB, GiB, KB, MB, GB)", "%v", err)
		}
		c.Sizes = []Weighted[int64]{{Value: n, Weight: 1}}
	}
	if r.rangeSize != "" {
		n, err := ParseSize(r.rangeSize)
		if err != nil {
			return nil, Usagef("--range-size", "use e.g. 4KiB, 1MiB, 4096", "%v", err)
		}
		if n <= 0 {
			return nil, Usagef("--range-size", "give a positive size", "range size must be above zero")
		}
		if c.Workload != OpGet && !(c.Workload == OpMixed && mixHas(c.Mix, OpGet)) {
			return nil, Usagef("--range-size", "use it with --workload get (or mixed with get)", "--range-size only applies to GET")
		}
		c.RangeSize = n
	}
	if c.Buckets < 1 {
		return nil, Usagef("--buckets", "give 1 or more", "bucket count %d is below 1", c.Buckets)
	}
	if c.Objects < 1 {
		return nil, Usagef("--objects", "give 1 or more", "key space of %d objects", c.Objects)
	}
	if c.Concurrency < 1 {
		return nil, Usagef("--concurrency", "give 1 or more", "concurrency %d is below 1", c.Concurrency)
	}
	if c.Duration < 0 || c.Ops < 0 || c.Warmup < 0 {
		return nil, Usagef("--duration/--ops/--warmup", "give positive values", "negative length")
	}
	if c.Duration > 0 && c.Ops > 0 {
		return nil, Usagef("--duration", "give --duration or --ops, not both", "both --duration and --ops given")
	}
	if c.Rate < 0 {
		return nil, Usagef("--rate", "give a positive ops/s, or leave it out for a closed loop", "negative rate")
	}
	if c.Duration == 0 && c.Ops == 0 {
		if c.Rate > 0 {
			return nil, Usagef("--rate", "add --duration 30s or --ops N", "an open-loop rate needs a length")
		}
		return nil, Usagef("--duration", "add --duration 30s or --ops N", "no run length given")
	}
	if c.Arrival != "constant" && c.Arrival != "poisson" {
		return nil, Usagef("--arrival", "use constant or poisson", "unknown arrival process %q", r.arrival)
	}
	if set["arrival"] && c.Rate == 0 {
		return nil, Usagef("--arrival", "add --rate R", "--arrival needs an open-loop --rate")
	}
	if c.MaxErrorRatio < 0 || c.MaxErrorRatio > 1 {
		return nil, Usagef("--max-error-ratio", "give a fraction between 0 and 1, e.g. 0.01", "error ratio %v out of range", c.MaxErrorRatio)
	}
	if c.Timeout <= 0 {
		return nil, Usagef("--timeout", "give a positive duration, e.g. 30s", "timeout %v", c.Timeout)
	}
	switch strings.ToLower(r.prefill) {
	case "":
		c.Prefill = PrefillDefault(c.Workload)
	case "true", "1", "yes":
		c.Prefill = true
	case "false", "0", "no":
		c.Prefill = false
	default:
		return nil, Usagef("--prefill", "use --prefill=true or --prefill=false", "bad value %q", r.prefill)
	}
	if c.Workload == OpDelete && !c.Prefill && !c.UseExisting {
		return nil, Usagef("--prefill", "drop --prefill=false, or add --use-existing with a kept key space", "delete without prefill would delete nothing")
	}
	c.BucketPrefix = r.bucketPrefix
	if c.BucketPrefix == "" {
		if c.UseExisting {
			return nil, Usagef("--bucket-prefix", "name the existing buckets with --bucket-prefix", "--use-existing needs --bucket-prefix")
		}
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.BucketPrefix = "cephbench-loadgen-" + hex.EncodeToString(b[:]) + "-"
	}
	for _, name := range []string{c.BucketName(0), c.BucketName(c.Buckets - 1)} {
		if len(name) < 3 || len(name) > 63 || !bucketRe.MatchString(name) || strings.Contains(name, "..") {
			return nil, Usagef("--bucket-prefix", "use lower-case letters, digits, '-' and '.', at most 63 characters with the index", "bucket name %q is not valid", name)
		}
	}
	if !keyRe.MatchString(c.KeyPrefix) {
		return nil, Usagef("--key-prefix", "use letters, digits and - _ . ~ / only", "key prefix %q has characters that need URL escaping", c.KeyPrefix)
	}
	if err := c.readCreds(getenv); err != nil {
		return nil, err
	}
	c.Raw = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { c.Raw[f.Name] = f.Value.String() })
	c.Raw["bucket-prefix"] = c.BucketPrefix
	c.Raw["prefill"] = strconv.FormatBool(c.Prefill)
	if c.Protocol == "swift" {
		c.Raw["swift-auth-url"] = c.SwiftAuthURL
	}
	return c, nil
}

func mixHas(mix []Weighted[string], op string) bool {
	for _, w := range mix {
		if w.Value == op {
			return true
		}
	}
	return false
}

func (c *Config) parseEndpoint(r *rawFlags) error {
	if r.endpoint == "" {
		return Usagef("--endpoint", "give the RGW base URL, e.g. --endpoint http://127.0.0.1:8000", "no endpoint given")
	}
	u, err := url.Parse(r.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Usagef("--endpoint", "give a URL like http://127.0.0.1:8000", "endpoint %q is not an http(s) URL", r.endpoint)
	}
	if u.User != nil {
		return Usagef("--endpoint", "pass credentials in the environment, not in the URL", "endpoint contains user information")
	}
	if c.Protocol == "s3" && strings.Trim(u.Path, "/") != "" {
		return Usagef("--endpoint", "S3 uses path-style addressing from the server root; drop the path", "endpoint %q has a path", r.endpoint)
	}
	c.Endpoint = strings.TrimRight(u.String(), "/")
	c.SwiftAuthURL = r.swiftAuth
	if c.SwiftAuthURL == "" {
		c.SwiftAuthURL = c.Endpoint + "/auth/v1.0"
	} else if v, err := url.Parse(c.SwiftAuthURL); err != nil || (v.Scheme != "http" && v.Scheme != "https") || v.Host == "" {
		return Usagef("--swift-auth-url", "give a URL like http://127.0.0.1:8000/auth/v1.0", "%q is not an http(s) URL", c.SwiftAuthURL)
	}
	return nil
}

func (c *Config) readCreds(getenv func(string) string) error {
	need := func(name string) (string, error) {
		v := getenv(name)
		if v == "" {
			return "", Usagef(name, "export "+name+" in the environment (credentials are never flags)", "missing credential")
		}
		return v, nil
	}
	var err error
	if c.Protocol == "s3" {
		if c.Creds.S3AccessKey, err = need(EnvS3AccessKey); err != nil {
			return err
		}
		c.Creds.S3SecretKey, err = need(EnvS3SecretKey)
		return err
	}
	if c.Creds.SwiftUser, err = need(EnvSwiftUser); err != nil {
		return err
	}
	c.Creds.SwiftKey, err = need(EnvSwiftKey)
	return err
}

func flagError(err error) *UsageError {
	msg := err.Error()
	// flag's messages: "flag provided but not defined: -x",
	// "invalid value \"4X\" for flag -objects: parse error", "flag needs an argument: -x".
	hint := "run 'cephbench-loadgen run --help' for the flags"
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		name := strings.TrimPrefix(msg, "flag provided but not defined: ")
		return Usagef("-"+strings.TrimLeft(name, "-"), hint, "unknown flag")
	case strings.HasPrefix(msg, "flag needs an argument: "):
		name := strings.TrimPrefix(msg, "flag needs an argument: ")
		return Usagef("-"+strings.TrimLeft(name, "-"), "give a value, e.g. --flag=value", "missing value")
	case strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value "):
		// invalid value "x" for flag -name: reason
		i := strings.Index(msg, " for flag -")
		if i > 0 {
			rest := msg[i+len(" for flag -"):]
			name, reason, _ := strings.Cut(rest, ": ")
			val := strings.TrimPrefix(strings.TrimPrefix(msg[:i], "invalid boolean value "), "invalid value ")
			return Usagef("--"+name, valueHint(name), "bad value %s (%s)", val, reason)
		}
	}
	return Usagef("flags", hint, "%s", msg)
}

func valueHint(name string) string {
	switch name {
	case "duration", "warmup", "timeout":
		return "use a Go duration like 30s, 5m, 1h"
	case "rate", "max-error-ratio":
		return "give a number"
	case "keep", "use-existing":
		return "write --" + name + " or --" + name + "=false"
	}
	return "give an integer"
}
