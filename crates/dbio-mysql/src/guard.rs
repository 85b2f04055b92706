//! The load guard: from one sample of the server (status variables, replica lag, InnoDB
//! history list length) decide whether the next chunk runs, the job pauses, or the job stops.
//!
//! Hysteresis: a job pauses when a variable reaches its `max` and resumes only when every
//! variable is below its `resume` mark (default half the max), so a load hovering at the mark
//! does not flip the job on and off each second. Replica lag and history length pause above
//! their maximum and resume below half of it. Critical load pauses too, and when it lasts
//! `critical_timeout` the job stops (between chunks, never inside one). A replica whose lag
//! cannot be read, or a history length that cannot be read, stops the job: the guard fails
//! closed. Pure code: the sampling is in [`crate::server`].

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One `NAME=VALUE` of `--max-load`, `--resume-load` or `--critical-load`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// A global status variable (`Threads_running`), as `SHOW GLOBAL STATUS` names it.
    pub variable: String,
    /// The mark.
    pub value: f64,
}

/// A threshold list that does not parse.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ThresholdError {
    /// An item is not `NAME=NUMBER` (or a bare number for Threads_running).
    #[error("'{0}' is not VARIABLE=NUMBER (e.g. Threads_running=25) nor a number")]
    Item(String),
    /// A variable name with characters a status variable never has.
    #[error("'{0}' is not a status variable name (letters, digits and _ only)")]
    Name(String),
    /// A negative or non-finite mark.
    #[error("'{0}': the mark must be a number >= 0")]
    Value(String),
}

/// Parses `Threads_running=25,Innodb_row_lock_current_waits=5`; a bare number is a mark for
/// Threads_running. An empty string is an empty list.
pub fn parse_thresholds(spec: &str) -> Result<Vec<Threshold>, ThresholdError> {
    let mut out: Vec<Threshold> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, value) = match item.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => ("Threads_running", item),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ThresholdError::Name(name.to_string()));
        }
        let value: f64 = value
            .parse()
            .map_err(|_| ThresholdError::Item(item.to_string()))?;
        if !value.is_finite() || value < 0.0 {
            return Err(ThresholdError::Value(item.to_string()));
        }
        out.retain(|t| !t.variable.eq_ignore_ascii_case(name));
        out.push(Threshold {
            variable: name.to_string(),
            value,
        });
    }
    Ok(out)
}

/// What the guard watches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GuardConfig {
    /// Pause at or above these.
    pub max_load: Vec<Threshold>,
    /// Resume when every max-load variable is below its mark here (a variable missing here
    /// resumes below half its max).
    pub resume_load: Vec<Threshold>,
    /// Pause at or above these and stop when it lasts [`GuardConfig::critical_timeout`].
    pub critical_load: Vec<Threshold>,
    /// How long critical load may last before the job stops.
    pub critical_timeout: Duration,
    /// Pause when a replica lags more (resume below half).
    pub max_lag: Option<Duration>,
    /// Pause when the InnoDB history list is longer (resume below half).
    pub max_history: Option<u64>,
}

impl GuardConfig {
    /// Every status variable the guard reads (max and critical load, each once).
    pub fn variables(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for t in self.max_load.iter().chain(&self.critical_load) {
            if !v.iter().any(|x| x.eq_ignore_ascii_case(&t.variable)) {
                v.push(t.variable.clone());
            }
        }
        v
    }

    fn resume_mark(&self, max: &Threshold) -> f64 {
        self.resume_load
            .iter()
            .find(|t| t.variable.eq_ignore_ascii_case(&max.variable))
            .map_or(max.value / 2.0, |t| t.value)
    }
}

/// One look at the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Status variables by name as the server spells them, Threads_running already without
    /// dbio's own running connections. A variable the guard needs that is missing fails closed.
    pub status: BTreeMap<String, f64>,
    /// Each replica's lag in seconds (`None`: could not be read).
    pub lag: Vec<(String, Option<f64>)>,
    /// The history list length (`None`: could not be read); only looked at with max_history.
    pub history: Option<u64>,
}

/// Why the job pauses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// A status variable at or above its max-load mark.
    Load {
        /// The variable.
        variable: String,
        /// Its value.
        value: f64,
        /// The max-load mark.
        max: f64,
        /// The mark it has to fall below.
        resume_below: f64,
    },
    /// A status variable at or above its critical-load mark.
    CriticalLoad {
        /// The variable.
        variable: String,
        /// Its value.
        value: f64,
        /// The critical mark.
        max: f64,
    },
    /// A replica lags more than max-lag.
    ReplicaLag {
        /// The replica (its DSN without the password).
        replica: String,
        /// Its lag.
        lag_s: f64,
        /// The limit.
        max_s: f64,
    },
    /// The InnoDB history list is longer than max-history.
    History {
        /// Its length.
        length: u64,
        /// The limit.
        max: u64,
    },
    /// The server stopped answering the guard's sampling (between chunks): the job
    /// reconnects with back-off, for at most `--reconnect-for`.
    NotAnswering {
        /// `host:port`.
        server: String,
        /// What the last attempt saw.
        error: String,
    },
    /// Outside the `--window`.
    Window {
        /// The window as given (`01:00-05:00`).
        window: String,
        /// The local time of day when the pause began (HH:MM:SS).
        now: String,
    },
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Load {
                variable,
                value,
                max,
                resume_below,
            } => write!(
                f,
                "{variable}={value} >= max-load {max} (resumes below {resume_below})"
            ),
            Cause::CriticalLoad {
                variable,
                value,
                max,
            } => write!(f, "{variable}={value} >= critical-load {max}"),
            Cause::ReplicaLag {
                replica,
                lag_s,
                max_s,
            } => write!(
                f,
                "replica {replica} lags {lag_s} s > max-lag {max_s} s (resumes below {} s)",
                max_s / 2.0
            ),
            Cause::History { length, max } => write!(
                f,
                "InnoDB history list length {length} > max-history {max} (resumes below {})",
                max / 2
            ),
            Cause::Window { window, now } => {
                write!(f, "{now} is outside the window {window}")
            }
            Cause::NotAnswering { server, error } => write!(
                f,
                "the server at {server} is not answering ({error}): reconnecting (--reconnect-for)"
            ),
        }
    }
}

/// Why the guard stops the job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Halt {
    /// Critical load lasted critical-timeout.
    CriticalTimeout {
        /// The last critical reading.
        cause: Cause,
        /// How long it lasted.
        lasted_s: f64,
    },
    /// A replica's lag could not be read (connection failed, not a replica, replication
    /// stopped): fail closed.
    ReplicaUnreadable {
        /// The replica.
        replica: String,
    },
    /// The history list length could not be read.
    HistoryUnreadable,
    /// A status variable the guard needs is not in SHOW GLOBAL STATUS.
    VariableMissing {
        /// The variable.
        variable: String,
    },
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Halt::CriticalTimeout { cause, lasted_s } => {
                write!(f, "critical load for {lasted_s:.1} s: {cause}")
            }
            Halt::ReplicaUnreadable { replica } => write!(
                f,
                "the lag of replica {replica} cannot be read (not reachable, not a replica, or replication stopped): stopping, as the guard fails closed"
            ),
            Halt::HistoryUnreadable => f.write_str(
                "the InnoDB history list length cannot be read (information_schema.INNODB_METRICS trx_rseg_history_len): stopping, as the guard fails closed",
            ),
            Halt::VariableMissing { variable } => write!(
                f,
                "status variable {variable} is not in SHOW GLOBAL STATUS: stopping, as the guard fails closed"
            ),
        }
    }
}

/// The guard's verdict for the next chunk.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Run the next chunk.
    Run,
    /// Wait and sample again.
    Pause(Cause),
    /// Stop the job (cleanly: the last chunk is committed and checkpointed).
    Stop(Halt),
}

/// The guard's state between samples.
#[derive(Clone, Debug)]
pub struct Guard {
    cfg: GuardConfig,
    paused: bool,
    critical_since: Option<Duration>,
}

impl Guard {
    /// A running guard.
    pub fn new(cfg: GuardConfig) -> Guard {
        Guard {
            cfg,
            paused: false,
            critical_since: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GuardConfig {
        &self.cfg
    }

    /// Decides from `sample`, taken at `now` (time since any fixed origin).
    pub fn decide(&mut self, sample: &Sample, now: Duration) -> Decision {
        let value = |name: &str| {
            sample
                .status
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        };
        for name in self.cfg.variables() {
            if value(&name).is_none() {
                return Decision::Stop(Halt::VariableMissing { variable: name });
            }
        }
        for (replica, lag) in &sample.lag {
            if lag.is_none() {
                return Decision::Stop(Halt::ReplicaUnreadable {
                    replica: replica.clone(),
                });
            }
        }
        if self.cfg.max_history.is_some() && sample.history.is_none() {
            return Decision::Stop(Halt::HistoryUnreadable);
        }

        // Critical load: pause, and stop when it has lasted critical_timeout.
        let critical = self.cfg.critical_load.iter().find_map(|t| {
            let v = value(&t.variable)?;
            (v >= t.value).then(|| Cause::CriticalLoad {
                variable: t.variable.clone(),
                value: v,
                max: t.value,
            })
        });
        match critical {
            Some(cause) => {
                let since = *self.critical_since.get_or_insert(now);
                let lasted = now.saturating_sub(since);
                if lasted >= self.cfg.critical_timeout {
                    return Decision::Stop(Halt::CriticalTimeout {
                        cause,
                        lasted_s: lasted.as_secs_f64(),
                    });
                }
                self.paused = true;
                return Decision::Pause(cause);
            }
            None => self.critical_since = None,
        }

        // Above a max: pause (or stay paused).
        let over = self.first_over(sample, &value);
        if let Some(cause) = over {
            self.paused = true;
            return Decision::Pause(cause);
        }
        if !self.paused {
            return Decision::Run;
        }
        // Paused: resume only when everything is below its resume mark.
        if let Some(cause) = self.first_not_below_resume(sample, &value) {
            return Decision::Pause(cause);
        }
        self.paused = false;
        Decision::Run
    }

    fn first_over(&self, sample: &Sample, value: &dyn Fn(&str) -> Option<f64>) -> Option<Cause> {
        for t in &self.cfg.max_load {
            let v = value(&t.variable)?;
            if v >= t.value {
                return Some(Cause::Load {
                    variable: t.variable.clone(),
                    value: v,
                    max: t.value,
                    resume_below: self.cfg.resume_mark(t),
                });
            }
        }
        if let Some(max) = self.cfg.max_lag {
            for (replica, lag) in &sample.lag {
                let lag = (*lag)?;
                if lag > max.as_secs_f64() {
                    return Some(Cause::ReplicaLag {
                        replica: replica.clone(),
                        lag_s: lag,
                        max_s: max.as_secs_f64(),
                    });
                }
            }
        }
        if let (Some(max), Some(len)) = (self.cfg.max_history, sample.history) {
            if len > max {
                return Some(Cause::History { length: len, max });
            }
        }
        None
    }

    fn first_not_below_resume(
        &self,
        sample: &Sample,
        value: &dyn Fn(&str) -> Option<f64>,
    ) -> Option<Cause> {
        for t in &self.cfg.max_load {
            let v = value(&t.variable)?;
            let resume = self.cfg.resume_mark(t);
            if v >= resume {
                return Some(Cause::Load {
                    variable: t.variable.clone(),
                    value: v,
                    max: t.value,
                    resume_below: resume,
                });
            }
        }
        if let Some(max) = self.cfg.max_lag {
            for (replica, lag) in &sample.lag {
                let lag = (*lag)?;
                if lag >= max.as_secs_f64() / 2.0 {
                    return Some(Cause::ReplicaLag {
                        replica: replica.clone(),
                        lag_s: lag,
                        max_s: max.as_secs_f64(),
                    });
                }
            }
        }
        if let (Some(max), Some(len)) = (self.cfg.max_history, sample.history) {
            if len >= max / 2 {
                return Some(Cause::History { length: len, max });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th(v: &str, x: f64) -> Threshold {
        Threshold {
            variable: v.into(),
            value: x,
        }
    }

    fn sample(running: f64) -> Sample {
        Sample {
            status: [("Threads_running".to_string(), running)].into(),
            ..Sample::default()
        }
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn thresholds_parse() {
        assert_eq!(
            parse_thresholds("Threads_running=25, Innodb_row_lock_current_waits=5").unwrap(),
            vec![
                th("Threads_running", 25.0),
                th("Innodb_row_lock_current_waits", 5.0)
            ]
        );
        assert_eq!(
            parse_thresholds("40").unwrap(),
            vec![th("Threads_running", 40.0)]
        );
        // The last mark for a variable wins.
        assert_eq!(
            parse_thresholds("Threads_running=4,threads_running=8").unwrap(),
            vec![th("threads_running", 8.0)]
        );
        assert_eq!(parse_thresholds("").unwrap(), vec![]);
        assert!(matches!(
            parse_thresholds("Threads_running=lots"),
            Err(ThresholdError::Item(_))
        ));
        assert!(matches!(
            parse_thresholds("x;drop=1"),
            Err(ThresholdError::Name(_))
        ));
        assert!(matches!(
            parse_thresholds("Threads_running=-1"),
            Err(ThresholdError::Value(_))
        ));
    }

    #[test]
    fn pauses_at_the_max_and_resumes_only_below_the_resume_mark() {
        let mut g = Guard::new(GuardConfig {
            max_load: vec![th("Threads_running", 10.0)],
            ..GuardConfig::default()
        });
        assert_eq!(g.decide(&sample(9.0), secs(0)), Decision::Run);
        let Decision::Pause(Cause::Load {
            value,
            resume_below,
            ..
        }) = g.decide(&sample(10.0), secs(1))
        else {
            panic!("no pause at the max");
        };
        assert_eq!((value, resume_below), (10.0, 5.0));
        // Below the max but not below half: still paused (hysteresis).
        assert!(matches!(
            g.decide(&sample(9.0), secs(2)),
            Decision::Pause(_)
        ));
        assert!(matches!(
            g.decide(&sample(5.0), secs(3)),
            Decision::Pause(_)
        ));
        assert_eq!(g.decide(&sample(4.0), secs(4)), Decision::Run);
        // Running again: 9 is fine.
        assert_eq!(g.decide(&sample(9.0), secs(5)), Decision::Run);
    }

    #[test]
    fn an_explicit_resume_mark_is_used() {
        let mut g = Guard::new(GuardConfig {
            max_load: vec![th("Threads_running", 10.0)],
            resume_load: vec![th("threads_running", 8.0)],
            ..GuardConfig::default()
        });
        assert!(matches!(
            g.decide(&sample(12.0), secs(0)),
            Decision::Pause(_)
        ));
        assert!(matches!(
            g.decide(&sample(8.0), secs(1)),
            Decision::Pause(_)
        ));
        assert_eq!(g.decide(&sample(7.0), secs(2)), Decision::Run);
    }

    #[test]
    fn critical_load_pauses_then_stops_after_the_timeout() {
        let mut g = Guard::new(GuardConfig {
            max_load: vec![th("Threads_running", 10.0)],
            // A variable that is not in max-load is checked too (pt-osc checks only those).
            critical_load: vec![th("Innodb_row_lock_current_waits", 3.0)],
            critical_timeout: secs(10),
            ..GuardConfig::default()
        });
        let mut s = sample(1.0);
        s.status.insert("Innodb_row_lock_current_waits".into(), 3.0);
        assert!(matches!(
            g.decide(&s, secs(100)),
            Decision::Pause(Cause::CriticalLoad { .. })
        ));
        assert!(matches!(g.decide(&s, secs(109)), Decision::Pause(_)));
        let Decision::Stop(Halt::CriticalTimeout { lasted_s, .. }) = g.decide(&s, secs(110)) else {
            panic!("critical load for the timeout did not stop");
        };
        assert_eq!(lasted_s, 10.0);
        // A dip below the critical mark restarts the clock.
        let mut g = Guard::new(g.config().clone());
        assert!(matches!(g.decide(&s, secs(0)), Decision::Pause(_)));
        let mut calm = s.clone();
        calm.status
            .insert("Innodb_row_lock_current_waits".into(), 0.0);
        assert_eq!(g.decide(&calm, secs(5)), Decision::Run);
        assert!(matches!(g.decide(&s, secs(9)), Decision::Pause(_)));
        assert!(matches!(g.decide(&s, secs(18)), Decision::Pause(_)));
        assert!(matches!(g.decide(&s, secs(19)), Decision::Stop(_)));
    }

    #[test]
    fn replica_lag_pauses_and_unreadable_lag_stops() {
        let mut g = Guard::new(GuardConfig {
            max_lag: Some(secs(10)),
            ..GuardConfig::default()
        });
        let lag = |l: Option<f64>| Sample {
            lag: vec![("r1".into(), Some(0.0)), ("r2".into(), l)],
            ..Sample::default()
        };
        assert_eq!(g.decide(&lag(Some(10.0)), secs(0)), Decision::Run);
        assert!(matches!(
            g.decide(&lag(Some(11.0)), secs(1)),
            Decision::Pause(Cause::ReplicaLag { ref replica, .. }) if replica == "r2"
        ));
        assert!(matches!(
            g.decide(&lag(Some(5.0)), secs(2)),
            Decision::Pause(_)
        ));
        assert_eq!(g.decide(&lag(Some(4.0)), secs(3)), Decision::Run);
        assert_eq!(
            g.decide(&lag(None), secs(4)),
            Decision::Stop(Halt::ReplicaUnreadable {
                replica: "r2".into()
            })
        );
    }

    #[test]
    fn history_length_pauses_and_missing_inputs_fail_closed() {
        let mut g = Guard::new(GuardConfig {
            max_history: Some(1000),
            max_load: vec![th("Threads_running", 10.0)],
            ..GuardConfig::default()
        });
        let h = |len: Option<u64>| Sample {
            history: len,
            ..sample(1.0)
        };
        assert_eq!(g.decide(&h(Some(1000)), secs(0)), Decision::Run);
        assert!(matches!(
            g.decide(&h(Some(1001)), secs(1)),
            Decision::Pause(Cause::History { length: 1001, .. })
        ));
        assert!(matches!(
            g.decide(&h(Some(500)), secs(2)),
            Decision::Pause(_)
        ));
        assert_eq!(g.decide(&h(Some(499)), secs(3)), Decision::Run);
        assert_eq!(
            g.decide(&h(None), secs(4)),
            Decision::Stop(Halt::HistoryUnreadable)
        );
        assert_eq!(
            g.decide(&Sample::default(), secs(5)),
            Decision::Stop(Halt::VariableMissing {
                variable: "Threads_running".into()
            })
        );
    }
}
