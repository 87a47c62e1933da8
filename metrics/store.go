package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"acctapi/auth"
	"acctapi/db"
)

// Writes describes the store's single writer: how many writes share each
// group commit, and how long its transaction takes.
type Writes struct {
	size     prometheus.Histogram
	duration prometheus.Histogram
}

// NewWrites registers acctapi_db_write_batch_size and
// acctapi_db_write_batch_duration_seconds on reg. Its ObserveBatch goes
// into db.Options.ObserveBatch.
func NewWrites(reg prometheus.Registerer) *Writes {
	w := &Writes{
		size: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "db", Name: "write_batch_size",
			Help: "Writes per group commit of the single writer (at most 128).",
			// Powers of two up to the writer's largest batch.
			Buckets: prometheus.ExponentialBuckets(1, 2, 8),
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "db", Name: "write_batch_duration_seconds",
			Help:    "Time of a group commit's transaction, its writes and the commit (the fsync with synchronous=FULL) included.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
	}
	reg.MustRegister(w.size, w.duration)
	return w
}

// ObserveBatch records one batch; it is a db.BatchObserver.
func (w *Writes) ObserveBatch(writes int, took time.Duration) {
	w.size.Observe(float64(writes))
	w.duration.Observe(took.Seconds())
}

// FileUsage sizes a file store: filestore.Store.
type FileUsage interface {
	Usage() (files int, bytes int64, err error)
}

// StoreOptions names what the scrape-time figures are read from.
type StoreOptions struct {
	DB *db.DB
	// Files is the local file store, whose size a scrape reads; nil (files
	// in an S3 bucket, which only a listing of every object could size)
	// leaves the file figures out.
	Files   FileUsage
	Limiter *auth.Limiter
	// Now is the store's clock, for the outbox's age; time.Now when nil.
	Now func() time.Time
	// UsageMaxAge is how long a walk of the file store stands for its size
	// before a scrape walks it again (a stat per stored file); 0 walks at
	// every scrape.
	UsageMaxAge time.Duration
}

// RegisterStore registers a collector that reads, at each scrape, the
// writer's queue, the rate limits' refusals, the webhook outbox (one
// query), the database's and the WAL's sizes, and the file store's size.
// A figure that cannot be read is left out of that scrape and logged by
// the Handler.
func RegisterStore(reg prometheus.Registerer, opts StoreOptions) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	reg.MustRegister(&storeCollector{opts: opts})
}

// outboxTimeout bounds the outbox query of a scrape.
const outboxTimeout = 5 * time.Second

var (
	queueDepthDesc = prometheus.NewDesc("acctapi_db_write_queue_depth",
		"Writes queued for the single writer or in the batch it runs.", nil, nil)
	refusalsDesc = prometheus.NewDesc("acctapi_rate_limit_refusals_total",
		"Requests refused by a rate limit, by the limit's scope (key: an API key's own limit; addr: failed authentication per address).",
		[]string{"scope"}, nil)
	outboxPendingDesc = prometheus.NewDesc("acctapi_webhook_outbox_pending",
		"Webhook deliveries waiting to be made or retried, of every firm.", nil, nil)
	outboxAgeDesc = prometheus.NewDesc("acctapi_webhook_outbox_oldest_pending_age_seconds",
		"Age of the oldest webhook delivery waiting; 0 when none waits.", nil, nil)
	mailPendingDesc = prometheus.NewDesc("acctapi_mail_outbox_pending",
		"Mails waiting to be sent or retried, of every firm (reminders count from their time on).", nil, nil)
	mailAgeDesc = prometheus.NewDesc("acctapi_mail_outbox_oldest_pending_age_seconds",
		"Age of the oldest mail waiting, since it was queued; 0 when none waits.", nil, nil)
	analysisPendingDesc = prometheus.NewDesc("acctapi_analysis_queue_pending",
		"Stored files waiting to be read, or being read, of every firm.", nil, nil)
	analysisAgeDesc = prometheus.NewDesc("acctapi_analysis_queue_oldest_pending_age_seconds",
		"Age of the oldest file waiting to be read, since it was queued; 0 when none waits.", nil, nil)
	databaseSizeDesc = prometheus.NewDesc("acctapi_database_size_bytes",
		"Size of the SQLite database file.", nil, nil)
	walSizeDesc = prometheus.NewDesc("acctapi_database_wal_size_bytes",
		"Size of the SQLite write-ahead log.", nil, nil)
	filesDesc = prometheus.NewDesc("acctapi_filestore_files",
		"Files in the file store.", nil, nil)
	filesSizeDesc = prometheus.NewDesc("acctapi_filestore_size_bytes",
		"Bytes of the files in the file store.", nil, nil)
)

// storeCollector reads the store's figures when scraped.
type storeCollector struct {
	opts StoreOptions

	// usage is the last walk of the file store, at walked.
	mu          sync.Mutex
	walked      time.Time
	files       int
	bytes       int64
	usageFailed error
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueDepthDesc, refusalsDesc, outboxPendingDesc, outboxAgeDesc, mailPendingDesc, mailAgeDesc,
		analysisPendingDesc, analysisAgeDesc, databaseSizeDesc, walSizeDesc, filesDesc, filesSizeDesc} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(c.opts.DB.PendingWrites()))
	for scope, n := range c.opts.Limiter.Refusals() {
		ch <- prometheus.MustNewConstMetric(refusalsDesc, prometheus.CounterValue, float64(n), scope)
	}

	ctx, cancel := context.WithTimeout(context.Background(), outboxTimeout)
	defer cancel()
	for _, o := range []struct {
		read          func(context.Context) (db.OutboxStats, error)
		pending, aged *prometheus.Desc
	}{{c.opts.DB.Outbox, outboxPendingDesc, outboxAgeDesc}, {c.opts.DB.MailOutbox, mailPendingDesc, mailAgeDesc},
		{c.opts.DB.AnalysisQueue, analysisPendingDesc, analysisAgeDesc}} {
		outbox, err := o.read(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(o.pending, err)
			continue
		}
		var age time.Duration
		if outbox.Pending > 0 {
			age = max(0, c.opts.Now().Sub(outbox.OldestPending))
		}
		ch <- prometheus.MustNewConstMetric(o.pending, prometheus.GaugeValue, float64(outbox.Pending))
		ch <- prometheus.MustNewConstMetric(o.aged, prometheus.GaugeValue, age.Seconds())
	}

	if database, wal, err := c.opts.DB.FileSizes(); err != nil {
		ch <- prometheus.NewInvalidMetric(databaseSizeDesc, err)
	} else {
		ch <- prometheus.MustNewConstMetric(databaseSizeDesc, prometheus.GaugeValue, float64(database))
		ch <- prometheus.MustNewConstMetric(walSizeDesc, prometheus.GaugeValue, float64(wal))
	}

	if c.opts.Files == nil {
		return
	}
	if files, bytes, err := c.usage(); err != nil {
		ch <- prometheus.NewInvalidMetric(filesDesc, err)
	} else {
		ch <- prometheus.MustNewConstMetric(filesDesc, prometheus.GaugeValue, float64(files))
		ch <- prometheus.MustNewConstMetric(filesSizeDesc, prometheus.GaugeValue, float64(bytes))
	}
}

// usage returns the file store's size, walking it when the last walk is
// older than UsageMaxAge. Concurrent scrapes wait for one walk.
func (c *storeCollector) usage() (int, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.walked.IsZero() || now.Sub(c.walked) >= c.opts.UsageMaxAge {
		c.files, c.bytes, c.usageFailed = c.opts.Files.Usage()
		c.walked = now
	}
	return c.files, c.bytes, c.usageFailed
}
