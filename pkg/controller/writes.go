package controller

import (
	"context"
	"time"
)

// throttleLogEvery bounds how often throttling is logged.
const throttleLogEvery = 30 * time.Second

// waitWrite takes one token of the write budget (Options.WriteQPS and
// WriteBurst), shared by every write the controller sends: policy status,
// Affected conditions and annotations, EffectivePolicies. A write that has
// to wait is counted (attache_write_throttled_total and the seconds
// waited), and logged at most once per throttleLogEvery with the waits
// since the last line, so that a budget set too low shows.
func (c *Controller) waitWrite(ctx context.Context) error {
	if c.limiter == nil {
		return nil // built without New (unit tests): no budget
	}
	r := c.limiter.Reserve()
	delay := r.Delay()
	if delay <= 0 {
		return nil
	}
	writesThrottled.WithLabelValues(c.opts.ControllerName).Inc()
	writeThrottleSeconds.WithLabelValues(c.opts.ControllerName).Add(delay.Seconds())
	c.throttleMu.Lock()
	c.throttled++
	c.throttledFor += delay
	if now := time.Now(); now.Sub(c.throttleLogged) >= throttleLogEvery {
		c.log.Info("writes throttled by the write budget", "waits", c.throttled, "waited", c.throttledFor.Round(time.Millisecond).String(),
			"writeQPS", c.opts.WriteQPS, "writeBurst", c.opts.WriteBurst)
		c.throttleLogged, c.throttled, c.throttledFor = now, 0, 0
	}
	c.throttleMu.Unlock()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// countWrite counts one write request of an object by its outcome.
func (c *Controller) countWrite(k objKey, err error) {
	kind := k.gk().String()
	if err != nil {
		statusWriteErrors.WithLabelValues(kind, writeErrorReason(err)).Inc()
		return
	}
	statusWrites.WithLabelValues(kind).Inc()
}
