//! The results of `dbio model`: operational-law bounds, exact mean value analysis, a Universal
//! Scalability Law fit and the live elements of response time. Times are in seconds (`_s`),
//! rates per second (`_per_s`): for a USL fit of someone else's data the rate is in the unit
//! of that data's X (dbio bench results: operations per second).

use serde::{Deserialize, Serialize};

/// How a service centre serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CentreKind {
    /// One server with a queue (a disk, a CPU modelled as one server, a link): requests wait.
    Queueing,
    /// No queue: every request is served at once (a fixed network latency, a sleep).
    Delay,
}

impl CentreKind {
    /// `queueing` or `delay`.
    pub fn name(self) -> &'static str {
        match self {
            CentreKind::Queueing => "queueing",
            CentreKind::Delay => "delay",
        }
    }
}

/// A service centre and its demand: the time one transaction spends being served there
/// (visits times service time), queueing excluded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Centre {
    /// The name given (`cpu`, `disk`, `vda`, `net`).
    pub name: String,
    /// Queueing or delay centre.
    pub kind: CentreKind,
    /// Service demand per transaction.
    pub demand_s: f64,
}

/// What every model of a closed system shares: the centres, the think time and the figures
/// the operational laws give.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Demands {
    /// The service centres, in the order given.
    pub centres: Vec<Centre>,
    /// Think time Z: the time a user waits between getting an answer and asking again.
    pub think_s: f64,
    /// D: the sum of all demands, the response time of a transaction alone in the system.
    pub total_demand_s: f64,
    /// Dmax: the largest demand at a queueing centre.
    pub max_demand_s: f64,
    /// The queueing centre with the largest demand.
    pub bottleneck: String,
    /// Nsat = (D + Z) / Dmax: the population from which queueing is certain (the knee).
    pub n_sat: f64,
    /// 1 / Dmax: the throughput no population can exceed.
    pub x_limit_per_s: f64,
}

/// The bounds at one population.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundsRow {
    /// Population (users, threads, connections).
    pub n: u64,
    /// X(N) <= min(N / (D + Z), 1 / Dmax).
    pub x_upper_per_s: f64,
    /// R(N) >= max(D, N Dmax - Z).
    pub r_lower_s: f64,
}

/// The benchmark the demands were measured in (`--from-bench`): its concurrency and what it
/// achieved, to set beside what the model says of that concurrency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The bench result file.
    pub source: String,
    /// Concurrency: threads x iodepth.
    pub n: f64,
    /// Operations per second achieved.
    pub x_per_s: f64,
    /// Mean latency of all operations.
    pub r_s: Option<f64>,
    /// How the demands were taken from it.
    pub notes: Vec<String>,
}

/// `dbio model bounds`: the asymptotic bounds for N = 1..max_n.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundsResult {
    /// Centres, think time, D, Dmax, the bottleneck, Nsat.
    #[serde(flatten)]
    pub demands: Demands,
    /// The benchmark the demands came from (`--from-bench`), else null.
    pub measured: Option<Measured>,
    /// One row per population.
    pub rows: Vec<BoundsRow>,
}

/// Exact MVA at one population, beside the bounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MvaRow {
    /// Population.
    pub n: u64,
    /// Throughput X(N).
    pub x_per_s: f64,
    /// Response time R(N) (think time excluded).
    pub r_s: f64,
    /// The bound on X(N), for comparison.
    pub x_upper_per_s: f64,
    /// The bound on R(N), for comparison.
    pub r_lower_s: f64,
    /// Utilisation of the bottleneck, X(N) Dmax.
    pub bottleneck_utilization_pct: f64,
}

/// One centre at the largest population solved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MvaCentre {
    /// The centre's name.
    pub name: String,
    /// Queueing or delay centre.
    pub kind: CentreKind,
    /// Its service demand.
    pub demand_s: f64,
    /// Residence time: the time a transaction spends there, waiting included.
    pub residence_s: f64,
    /// Mean number of transactions there (waiting and in service).
    pub queue_length: f64,
    /// X D as a percentage (queueing centres; a delay centre is never busy).
    pub utilization_pct: Option<f64>,
}

/// `dbio model mva`: exact single-class mean value analysis for N = 1..max_n.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MvaResult {
    /// Centres, think time, D, Dmax, the bottleneck, Nsat.
    #[serde(flatten)]
    pub demands: Demands,
    /// The benchmark the demands came from (`--from-bench`), else null.
    pub measured: Option<Measured>,
    /// One row per population.
    pub rows: Vec<MvaRow>,
    /// The largest population solved.
    pub n: u64,
    /// Each centre at that population.
    pub per_centre: Vec<MvaCentre>,
}

/// One measured point of a USL fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UslPoint {
    /// Concurrency (users, threads, processors).
    pub n: f64,
    /// Measured throughput.
    pub x_per_s: f64,
    /// Measured response time, when the input had one.
    pub r_s: Option<f64>,
    /// The fitted curve at `n`.
    pub fitted_x_per_s: f64,
    /// Measured minus fitted.
    pub residual_per_s: f64,
    /// X(N) / (N lambda): the fraction of linear scaling reached.
    pub efficiency: f64,
}

/// A fitted coefficient with its standard error.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Coefficient {
    /// The least-squares estimate (within its bounds).
    pub estimate: f64,
    /// Standard error from the Jacobian at the estimate, as R's `nls` reports it (also when
    /// the estimate sits on a bound); absent with fewer than four points or a singular fit.
    pub std_error: Option<f64>,
    /// True when the estimate sits on a bound (0 for sigma and kappa): the unconstrained
    /// optimum lies outside [0, 1].
    pub at_bound: bool,
}

/// What the fit says in plain words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UslReading {
    /// Within the measured range the losses stay small: no limit can be read from the data.
    LinearSoFar,
    /// Contention (sigma) flattens the curve towards lambda / sigma; no retrograde region is
    /// in sight.
    ContentionBound,
    /// Coherency (kappa) makes throughput peak at Nmax and fall beyond it.
    CoherencyBound,
}

/// A throughput predicted by the fitted curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UslPrediction {
    /// Concurrency.
    pub n: f64,
    /// X(N) on the fitted curve.
    pub x_per_s: f64,
    /// N / X(N) - Z with the think time implied by the measurements (when they had R).
    pub r_s: Option<f64>,
    /// True when N is beyond twice the largest measured N: an extrapolation to distrust.
    pub beyond_2x_measured: bool,
}

/// `dbio model usl`: X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)) fitted by
/// bounded non-linear least squares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UslResult {
    /// Where the points came from.
    pub source: String,
    /// The measured points with the fitted values.
    pub points: Vec<UslPoint>,
    /// Contention, in [0, 1].
    pub sigma: Coefficient,
    /// Coherency, in [0, 1].
    pub kappa: Coefficient,
    /// Throughput of one user without any loss (fitted, not X(1)).
    pub lambda_per_s: Coefficient,
    /// Residual standard error sqrt(SSR / df).
    pub residual_std_error_per_s: Option<f64>,
    /// Degrees of freedom: points minus three.
    pub df: u64,
    /// 1 - SSR / SST.
    pub r_squared: f64,
    /// The largest measured N.
    pub max_measured_n: f64,
    /// sqrt((1 - sigma) / kappa): where the curve peaks (absent when kappa = 0).
    pub n_max: Option<f64>,
    /// X at `n_max` (the real-valued peak of the curve, not rounded to a whole N).
    pub x_max_per_s: Option<f64>,
    /// lambda / sigma: the ceiling throughput approaches when kappa = 0 and sigma > 0.
    pub x_ceiling_per_s: Option<f64>,
    /// Think time Z = mean of N / X - R over the points, when every point had R (0 for a
    /// closed benchmark without think time).
    pub implied_think_s: Option<f64>,
    /// The plain-words class.
    pub reading: UslReading,
    /// The reading as a sentence with the figures.
    pub reading_text: String,
    /// Predictions asked for with `--predict`.
    pub predictions: Vec<UslPrediction>,
    /// Things to distrust (extrapolation beyond twice the measured range, too few points).
    pub warnings: Vec<String>,
    /// How the points were read (which sweep curve, which points were left out).
    pub notes: Vec<String>,
}

/// What a live resource is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    /// All CPUs (/proc/stat).
    Cpu,
    /// A block device (/proc/diskstats).
    Disk,
    /// A network interface (/proc/net/dev against its link speed).
    Net,
}

/// One resource measured over the interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveResource {
    /// `cpu`, the device name, or the interface name.
    pub name: String,
    /// CPU, disk or network.
    pub kind: ResourceKind,
    /// Busy fraction over the interval as a percentage: the CPUs' average busy time
    /// (iostat -c's %user + %system + %steal: user, nice, system, irq, softirq, steal), the
    /// device's io_ticks, the busier direction of the link against its speed.
    pub utilization_pct: f64,
    /// Service demand U / TPS (the seed's Dcpu = (%usr+%sys)/TPS, Ddisk = %busy/TPS,
    /// Dnet = utilisation/TPS).
    pub demand_s: f64,
    /// For the CPU: how many CPUs the utilisation is averaged over (the demand is that of the
    /// CPUs seen as one server ncpu times as fast).
    pub servers: Option<u32>,
    /// What was measured, for people (`12.3 MB/s rx of 1000 Mb/s`).
    pub detail: String,
}

/// `dbio model live`: the elements of response time of a running server over one interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveResult {
    /// Length of the measured interval.
    pub interval_s: f64,
    /// Transactions per second over the interval (TPS).
    pub transactions_per_s: f64,
    /// Where TPS came from: `Com_commit+Com_rollback`, `Questions` or `--tps`.
    pub tps_source: String,
    /// Each resource with its utilisation and demand.
    pub resources: Vec<LiveResource>,
    /// Think time used for Nsat (given with `--think`, 0 by default).
    pub think_s: f64,
    /// D = sum of the demands.
    pub total_demand_s: f64,
    /// Dmax.
    pub max_demand_s: f64,
    /// The resource with Dmax.
    pub bottleneck: String,
    /// Nsat = (D + Z) / Dmax.
    pub n_sat: f64,
    /// The mean of Threads_running over the interval (sampled every 250 ms), the sampling
    /// connection excluded: the concurrency N.
    pub threads_running: Option<f64>,
    /// The floor on the mean response time at that concurrency: max(D, N Dmax - Z).
    pub r_floor_s: Option<f64>,
    /// How the figures were obtained and what they leave out.
    pub notes: Vec<String>,
}
