//! What the RAID readers produce: controllers, their virtual and physical drives, batteries,
//! and the words of each tool mapped to one vocabulary; shared by every reader in this module.

use serde::Serialize;

/// The tools dbio reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// LSI/Avago MegaCli (`-AdpAllInfo`, `-LDInfo`, `-LdPdInfo`, `-AdpBbuCmd`).
    Megacli,
    /// Broadcom storcli or Dell perccli, text output.
    Storcli,
    /// Broadcom storcli or Dell perccli, `J` JSON output.
    StorcliJson,
    /// HPE ssacli / hpssacli / hpacucli (`ctrl all show config detail`).
    Ssacli,
    /// cciss_vol_status (HP Smart Array volume status).
    CcissVolStatus,
    /// Adaptec/Microsemi arcconf (`GETCONFIG n AL`).
    Arcconf,
    /// 3ware tw_cli (`/cN show`, `/cN/uN show all`, `/cN/bbu show all`).
    TwCli,
    /// Dell OpenManage `omreport storage vdisk` / `battery` / `controller` / `pdisk`.
    Omreport,
}

impl Tool {
    /// Short name used in device labels (`storcli` for both text and JSON).
    pub fn short(self) -> &'static str {
        match self {
            Tool::Megacli => "MegaCli",
            Tool::Storcli | Tool::StorcliJson => "storcli",
            Tool::Ssacli => "ssacli",
            Tool::CcissVolStatus => "cciss_vol_status",
            Tool::Arcconf => "arcconf",
            Tool::TwCli => "tw_cli",
            Tool::Omreport => "omreport",
        }
    }

    /// The command a person would run to get this output.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Megacli => "MegaCli",
            Tool::Storcli => "storcli/perccli",
            Tool::StorcliJson => "storcli/perccli (JSON)",
            Tool::Ssacli => "ssacli/hpacucli",
            Tool::CcissVolStatus => "cciss_vol_status",
            Tool::Arcconf => "arcconf",
            Tool::TwCli => "tw_cli",
            Tool::Omreport => "omreport",
        }
    }
}

/// A write-cache policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WritePolicy {
    /// Write-back: writes are acknowledged from controller cache.
    WriteBack,
    /// Write-back even when the battery is bad or missing.
    AlwaysWriteBack,
    /// Write-through: every write waits for the disks.
    WriteThrough,
}

impl WritePolicy {
    /// Write-back of either kind.
    pub fn is_write_back(self) -> bool {
        matches!(self, WritePolicy::WriteBack | WritePolicy::AlwaysWriteBack)
    }
}

/// What the battery (or flash-backup module) is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BatteryState {
    /// Healthy and charged.
    Ok,
    /// Charging or recharging.
    Charging,
    /// In a learn (relearn, recondition, capacity test) cycle.
    Learning,
    /// Degraded, low capacity, replacement advised.
    Degraded,
    /// Failed.
    Failed,
    /// Not fitted or not detected.
    Missing,
    /// Fitted, but its state is not in this output (MegaCli `-AdpAllInfo` says only
    /// `BBU: Present`).
    Present,
    /// The tool's words were not recognised.
    Unknown,
}

/// What a tool printed about a battery or flash module, gathered by its parser; one
/// function, [`battery_state`], turns it into a [`BatteryState`] for every tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatteryFlags {
    /// The tool's own state word (`Optimal`, `Non Operational`, `Learning`...).
    pub state_word: Option<String>,
    /// A learn (relearn, recondition, capacity test) cycle is running.
    pub learn_active: bool,
    /// The battery is charging.
    pub charging: bool,
    /// The tool says the pack is missing.
    pub missing: bool,
    /// The tool says the pack must be replaced (or its state of health is bad).
    pub replace: bool,
    /// Low capacity or about to fail.
    pub degraded: bool,
    /// The tool printed its health flags (so no raised flag means healthy).
    pub flags_seen: bool,
}

/// One vocabulary for the battery state words of every tool: MegaCli, storcli/perccli,
/// ssacli, arcconf, tw_cli and omreport.
pub fn battery_state_word(s: &str) -> BatteryState {
    let t = s.trim().to_ascii_lowercase();
    if t.is_empty() {
        BatteryState::Unknown
    } else if t.contains("learn") || t.contains("recondition") || t.contains("testing") {
        BatteryState::Learning
    } else if t.contains("charg") {
        BatteryState::Charging
    } else if t.contains("fail")
        || t.contains("fault")
        || t.contains("error")
        || t.contains("replace")
    {
        BatteryState::Failed
    } else if t.contains("missing")
        || t.contains("absent")
        || t.contains("not present")
        || t.contains("not installed")
        || t == "msng"
    {
        BatteryState::Missing
    } else if t.contains("degraded")
        || t.starts_with("dgd")
        || t.contains("low")
        || t.contains("attention")
        || t.contains("weak")
        || t.starts_with("non operational")
        || t.starts_with("non-operational")
    {
        BatteryState::Degraded
    } else if t == "ok"
        || t == "opt"
        || t == "good"
        || t == "healthy"
        || (t.contains("optimal") && !t.contains("not optimal"))
        || t.starts_with("operational")
        || t.starts_with("ready")
    {
        BatteryState::Ok
    } else if t == "present" {
        BatteryState::Present
    } else {
        BatteryState::Unknown
    }
}

/// The state of a battery from everything its tool printed: flags override the state
/// word (a pack that must be replaced has failed whatever its word; a running learn cycle
/// is a learn cycle), and a tool that printed its flags with none raised and no state word
/// (old MegaCli prints an empty `Battery state:`) has a healthy battery.
pub fn battery_state(f: &BatteryFlags) -> BatteryState {
    let word = f
        .state_word
        .as_deref()
        .map(battery_state_word)
        .unwrap_or(BatteryState::Unknown);
    let soft = matches!(
        word,
        BatteryState::Ok | BatteryState::Unknown | BatteryState::Present
    );
    if f.missing {
        BatteryState::Missing
    } else if f.replace || word == BatteryState::Failed {
        BatteryState::Failed
    } else if f.learn_active {
        BatteryState::Learning
    } else if f.charging && soft {
        BatteryState::Charging
    } else if f.degraded && soft {
        BatteryState::Degraded
    } else if word == BatteryState::Unknown
        && f.state_word.as_deref().is_none_or(|w| w.trim().is_empty())
        && f.flags_seen
    {
        BatteryState::Ok
    } else {
        word
    }
}

/// Battery or flash-backup (supercapacitor, CacheVault, ZMM) module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Battery {
    /// Battery, capacitor, CacheVault, ZMM...
    pub kind: String,
    /// Normalised state.
    pub state: BatteryState,
    /// The tool's own words for the state.
    pub state_text: String,
    /// A learn cycle is running.
    pub learn_active: bool,
    /// A learn cycle is requested or due.
    pub learn_due: bool,
    /// Next learn time as the tool printed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_learn: Option<String>,
    /// Tool lines that back the state.
    pub evidence: Vec<String>,
}

impl Battery {
    /// A battery is working when it can protect the cache right now.
    pub fn working(&self) -> bool {
        matches!(self.state, BatteryState::Ok)
    }
}

/// A virtual drive (logical drive, unit, array) as the controller exports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VirtualDrive {
    /// Identifier as the tool names it (`0`, `0/1`, `u0`, `1`).
    pub id: String,
    /// Name or label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// RAID level as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raid_level: Option<String>,
    /// Size as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// State as printed (Optimal, OK, Degraded...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Configured (default) write policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured_write: Option<WritePolicy>,
    /// Current write policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_write: Option<WritePolicy>,
    /// The tool shows only one policy; current is inferred from the battery.
    pub current_inferred: bool,
    /// Write-back stays on when the battery fails ("Write Cache OK if Bad BBU", AWB,
    /// "No-Battery Write Cache: Enabled", "Enabled (write-back)" without battery protection).
    pub write_back_on_bad_battery: bool,
    /// The controller temporarily disabled the cache.
    pub cache_temporarily_disabled: bool,
    /// Why, as the tool says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_disabled_reason: Option<String>,
    /// Controller read-ahead on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead: Option<bool>,
    /// Drive (disk) write cache enabled behind the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive_write_cache: Option<bool>,
    /// Stripe unit (strip size) in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_bytes: Option<u64>,
    /// OS device (`/dev/sda`) when the tool says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os_device: Option<String>,
    /// Drive group (disk group) the volume lives on, when the tool says (storcli `DG/VD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive_group: Option<String>,
    /// Tool lines behind the policies.
    pub evidence: Vec<String>,
}

/// A physical drive (disk, SSD) behind the controller, as its tool reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PhysicalDrive {
    /// Identifier as the tool names it (`32:4` enclosure:slot, `p0` port, `0,1` channel,device).
    pub id: String,
    /// State as printed (`Online, Spun Up`, `Unconfigured(bad)`, `DEGRADED`, `Failed`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Predictive failure count (MegaCli, storcli).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predictive_failures: Option<u64>,
    /// Media error count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_errors: Option<u64>,
    /// Other error count (link resets, timeouts: shown, not judged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_errors: Option<u64>,
    /// The drive flagged a S.M.A.R.T. alert (or arcconf counts S.M.A.R.T. warnings).
    pub smart_alert: bool,
    /// The tool says the drive predicts its failure (omreport `Failure Predicted: Yes`).
    pub failure_predicted: bool,
    /// The drive's own write cache is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<bool>,
    /// Tool lines behind the state.
    pub evidence: Vec<String>,
}

/// One controller.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Controller {
    /// Identifier (`0`, `c0`, slot, or name).
    pub id: String,
    /// Model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Cache memory in bytes (Some(0): no cache fitted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
    /// Battery or flash backup; `None` when the output does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<Battery>,
    /// Controller-wide drive write cache setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive_write_cache: Option<bool>,
    /// Drive groups whose drive caches are on but whose virtual drive is not in this output
    /// (storcli's TOPOLOGY `PDC` `enbl`), as the tool's lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drive_cache_groups: Vec<String>,
    /// Controller cache status in the tool's words (`OK`, `Temporarily Disabled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_status: Option<String>,
    /// The controller says its write cache is disabled (temporarily or for good): why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_disabled: Option<String>,
    /// Other faults the tool reports (enclosure temperature, a failed spare, a controller
    /// status that is not OK).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// Faults that put data at risk, as the tool words them (a failed array, a defunct
    /// drive count): CRIT.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// Background operations the tool reports (verify, initialisation, patrol read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<String>,
    /// Virtual drives.
    pub virtual_drives: Vec<VirtualDrive>,
    /// Physical drives, when the output lists them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub physical_drives: Vec<PhysicalDrive>,
}

impl Controller {
    /// Nothing about this controller was read, not even its model.
    pub fn is_empty(&self) -> bool {
        self.model.is_none()
            && self.virtual_drives.is_empty()
            && self.battery.is_none()
            && self.cache_status.is_none()
            && self.cache_disabled.is_none()
            && self.cache_bytes.is_none()
            && self.problems.is_empty()
            && self.faults.is_empty()
            && self.physical_drives.is_empty()
    }
}

/// Everything read from one tool's output (one or several files).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RaidReport {
    /// Which tool.
    pub tool: Tool,
    /// Where the text came from (file names or the command).
    pub sources: Vec<String>,
    /// Controllers found.
    pub controllers: Vec<Controller>,
    /// Things the parser noticed but could not place.
    pub notes: Vec<String>,
}

/// Why RAID output could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RaidParseError {
    /// No known tool printed this.
    #[error("output not recognised as MegaCli, storcli/perccli, ssacli/hpacucli, cciss_vol_status, arcconf, tw_cli or omreport; it starts: {first_lines}")]
    Unrecognised {
        /// The first lines, quoted.
        first_lines: String,
    },
    /// The tool was recognised but nothing could be read.
    #[error(
        "{tool} output has no controller, virtual drive or battery in it; it starts: {first_lines}"
    )]
    Empty {
        /// Tool name.
        tool: String,
        /// The first lines, quoted.
        first_lines: String,
    },
    /// storcli JSON that does not parse.
    #[error("storcli JSON does not parse: {0}")]
    Json(String),
}

/// Splits `key : value` (or `key = value` when `eq`) lines; keys and values trimmed.
pub(crate) fn kv(line: &str, sep: char) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(sep)?;
    let k = k.trim();
    if k.is_empty() {
        return None;
    }
    Some((k, v.trim()))
}

/// Parses `64 KB`, `256 KB`, `1 MB`, `64K`, `64KB` into bytes.
pub(crate) fn parse_strip(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().ok()?;
    let unit = s[digits.len()..].trim().to_ascii_lowercase();
    let mult = match unit.as_str() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1 << 20,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Parses `512MB`, `1024 MB`, `1 GB`, `0MB` into bytes.
pub(crate) fn parse_mem(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let n: f64 = digits.parse().ok()?;
    let unit = s[digits.len()..].trim().to_ascii_lowercase();
    let mult = match unit.split_whitespace().next().unwrap_or("") {
        "kb" | "k" => 1024.0,
        "mb" | "m" | "" => 1048576.0,
        "gb" | "g" => 1073741824.0,
        _ => return None,
    };
    // A float cast saturates silently: a size past 64 bits is not a size.
    let bytes = n * mult;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes as u64)
}
