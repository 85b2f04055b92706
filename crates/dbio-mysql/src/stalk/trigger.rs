//! The trigger language of `dbio mysql stalk --trigger`: a pure parser and evaluator.
//!
//! ```text
//! expr    := and ('or' and)*
//! and     := atom ('and' atom)*
//! atom    := '(' expr ')' | operand OP number[unit]
//! operand := NAME                        SHOW GLOBAL STATUS value      Threads_running
//!          | rate(NAME)                  its change per second         rate(Innodb_rows_read)
//!          | processlist(FIELD~'RE',...)  threads whose FIELD matches  processlist(state~'Waiting for.*lock')
//!          | processlist()               all threads but Sleep/Daemon
//!          | DEV.FIGURE                  diskstats figure of DEV       vda.await, sda.util
//! OP      := > >= < <= = !=
//! unit    := ms | us | s (for await: compared in ms) | % (util) | k M G (x1000)
//! ```
//!
//! Device figures: `await` (ms per completed I/O), `r_await`, `w_await`, `util` (%),
//! `r_s`, `w_s` (completions per second), `rkb_s`, `wkb_s`, `queue` (average in flight).
//! processlist fields: `user`, `host`, `db`, `command`, `state`, `info`; the regular
//! expression is unanchored and case-insensitive, like `grep -i`.
//!
//! A value that cannot be had in a check (the first check of a rate, a device not present, a
//! status variable the server does not have) makes its comparison false, as pt-stalk counts an
//! empty value as not matched. [`Cycles`] keeps pt-stalk's `--cycles`: the trigger fires when
//! the expression was true in that many consecutive checks; a false check starts the count
//! over, and so does a collection.

use regex::Regex;
use std::collections::HashMap;
use std::fmt;

/// A parsed trigger.
#[derive(Clone, Debug)]
pub enum Expr {
    /// Both sides true.
    And(Box<Expr>, Box<Expr>),
    /// Either side true.
    Or(Box<Expr>, Box<Expr>),
    /// A comparison.
    Cmp(Cmp),
}

/// `operand OP threshold`.
#[derive(Clone, Debug)]
pub struct Cmp {
    /// What is compared.
    pub operand: Operand,
    /// How.
    pub op: Op,
    /// The threshold, in the operand's unit (ms for latencies, % for util).
    pub threshold: f64,
    /// The source text of the comparison, for records (`Threads_running>50`).
    pub text: String,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `=`
    Eq,
    /// `!=`
    Ne,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }
}

/// A processlist field a pattern can test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// USER
    User,
    /// HOST
    Host,
    /// DB
    Db,
    /// COMMAND
    Command,
    /// STATE
    State,
    /// INFO (the statement)
    Info,
}

/// One `FIELD~'RE'` of a processlist count.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The field.
    pub field: Field,
    /// The compiled expression (case-insensitive).
    pub re: Regex,
}

/// What a comparison reads.
#[derive(Clone, Debug)]
pub enum Operand {
    /// A SHOW GLOBAL STATUS value (name as the server spells it, matched case-insensitively).
    Status(String),
    /// A status counter's change per second since the previous check.
    Rate(String),
    /// The number of threads matching every pattern (no pattern: every thread that is not
    /// sleeping and not a daemon).
    Processlist(Vec<Pattern>),
    /// A figure of one device from the diskstats sampler.
    Device {
        /// The device name as in /proc/diskstats.
        device: String,
        /// The figure.
        figure: DevFigure,
    },
}

/// A device figure (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevFigure {
    /// ms per completed I/O.
    Await,
    /// ms per completed read.
    RAwait,
    /// ms per completed write.
    WAwait,
    /// % of the interval the device was busy.
    Util,
    /// reads completed per second.
    RS,
    /// writes completed per second.
    WS,
    /// KiB read per second.
    RkbS,
    /// KiB written per second.
    WkbS,
    /// average I/Os in flight.
    Queue,
}

/// One thread of the processlist, as the checks see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Thread {
    /// USER
    pub user: String,
    /// HOST (with its port, as the server shows it)
    pub host: String,
    /// DB
    pub db: String,
    /// COMMAND
    pub command: String,
    /// STATE
    pub state: String,
    /// INFO
    pub info: String,
    /// TIME in seconds
    pub time_s: u64,
}

impl Thread {
    fn field(&self, f: Field) -> &str {
        match f {
            Field::User => &self.user,
            Field::Host => &self.host,
            Field::Db => &self.db,
            Field::Command => &self.command,
            Field::State => &self.state,
            Field::Info => &self.info,
        }
    }
    /// Whether the thread works: not an idle connection and not a server daemon thread.
    pub fn active(&self) -> bool {
        !matches!(
            self.command.as_str(),
            "Sleep" | "Daemon" | "Binlog Dump" | "Binlog Dump GTID"
        ) && !self.user.eq_ignore_ascii_case("system user")
            && !self.user.eq_ignore_ascii_case("event_scheduler")
            && !self.user.eq_ignore_ascii_case("unauthenticated user")
    }
}

/// Everything one check can read: the operands are looked up here.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// SHOW GLOBAL STATUS, names lower-cased.
    pub status: HashMap<String, f64>,
    /// Per-second rates of the status counters since the previous check, names lower-cased
    /// (empty at the first check).
    pub rates: HashMap<String, f64>,
    /// The processlist, when the trigger needs it.
    pub processlist: Option<Vec<Thread>>,
    /// Device figures by `device.figure` (`vda.await`), for the devices the trigger names.
    pub devices: HashMap<String, f64>,
}

/// The error of a trigger that does not parse: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--trigger {text:?}: at character {at}: {message}")]
pub struct ParseError {
    /// The whole trigger.
    pub text: String,
    /// 1-based character position.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DevFigure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DevFigure::Await => "await",
            DevFigure::RAwait => "r_await",
            DevFigure::WAwait => "w_await",
            DevFigure::Util => "util",
            DevFigure::RS => "r_s",
            DevFigure::WS => "w_s",
            DevFigure::RkbS => "rkb_s",
            DevFigure::WkbS => "wkb_s",
            DevFigure::Queue => "queue",
        })
    }
}

impl DevFigure {
    fn parse(s: &str) -> Option<DevFigure> {
        Some(match s.to_ascii_lowercase().as_str() {
            "await" => DevFigure::Await,
            "r_await" => DevFigure::RAwait,
            "w_await" => DevFigure::WAwait,
            "util" => DevFigure::Util,
            "r_s" => DevFigure::RS,
            "w_s" => DevFigure::WS,
            "rkb_s" => DevFigure::RkbS,
            "wkb_s" => DevFigure::WkbS,
            "queue" => DevFigure::Queue,
            _ => return None,
        })
    }
    /// Whether the figure is a latency (its threshold takes ms/us/s).
    fn is_time(self) -> bool {
        matches!(
            self,
            DevFigure::Await | DevFigure::RAwait | DevFigure::WAwait
        )
    }
}

/// ms per completed read or write over an interval.
pub fn await_ms(f: &dbio_schema::iostat::Figures) -> f64 {
    let n = f.r_per_s + f.w_per_s;
    if n > 0.0 {
        (f.r_await_ms * f.r_per_s + f.w_await_ms * f.w_per_s) / n
    } else {
        0.0
    }
}

/// Every device figure of an interval, for [`Observed::devices`].
pub fn device_figures(f: &dbio_schema::iostat::Figures) -> [(DevFigure, f64); 9] {
    [
        (DevFigure::Await, await_ms(f)),
        (DevFigure::RAwait, f.r_await_ms),
        (DevFigure::WAwait, f.w_await_ms),
        (DevFigure::Util, f.util_pct),
        (DevFigure::RS, f.r_per_s),
        (DevFigure::WS, f.w_per_s),
        (DevFigure::RkbS, f.rkb_per_s),
        (DevFigure::WkbS, f.wkb_per_s),
        (DevFigure::Queue, f.aqu_sz),
    ]
}

/// What the trigger needs sampled, so a check reads only that.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// SHOW GLOBAL STATUS (for values or rates).
    pub status: bool,
    /// The status variables named (values and rates), as written, each once.
    pub status_vars: Vec<String>,
    /// The processlist.
    pub processlist: bool,
    /// The devices named.
    pub devices: Vec<String>,
}

impl Expr {
    /// Parses a trigger.
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser {
            text,
            chars: text.char_indices().collect(),
            pos: 0,
        };
        let e = p.or()?;
        p.ws();
        if p.pos < p.chars.len() {
            return Err(p.err("expected `and`, `or` or the end of the trigger"));
        }
        Ok(e)
    }

    /// What must be sampled for [`Expr::eval`].
    pub fn needs(&self) -> Needs {
        let mut n = Needs::default();
        self.visit(&mut |c| match &c.operand {
            Operand::Status(v) | Operand::Rate(v) => {
                n.status = true;
                if !n.status_vars.iter().any(|x| x.eq_ignore_ascii_case(v)) {
                    n.status_vars.push(v.clone());
                }
            }
            Operand::Processlist(_) => n.processlist = true,
            Operand::Device { device, .. } => {
                if !n.devices.contains(device) {
                    n.devices.push(device.clone())
                }
            }
        });
        n
    }

    fn visit(&self, f: &mut dyn FnMut(&Cmp)) {
        match self {
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Cmp(c) => f(c),
        }
    }

    /// Evaluates the trigger on one check's observations: whether it holds, and the value of
    /// every comparison (`None`: not available this check), in source order.
    pub fn eval(&self, o: &Observed) -> (bool, Vec<(String, Option<f64>)>) {
        let mut values = Vec::new();
        self.visit(&mut |c| values.push((c.text.clone(), c.operand.value(o))));
        (self.holds(o), values)
    }

    fn holds(&self, o: &Observed) -> bool {
        match self {
            Expr::And(a, b) => a.holds(o) && b.holds(o),
            Expr::Or(a, b) => a.holds(o) || b.holds(o),
            Expr::Cmp(c) => c
                .operand
                .value(o)
                .is_some_and(|v| c.op.holds(v, c.threshold)),
        }
    }
}

impl Operand {
    /// The operand's value in a check.
    pub fn value(&self, o: &Observed) -> Option<f64> {
        match self {
            Operand::Status(n) => o.status.get(&n.to_ascii_lowercase()).copied(),
            Operand::Rate(n) => o.rates.get(&n.to_ascii_lowercase()).copied(),
            Operand::Processlist(pats) => {
                let pl = o.processlist.as_ref()?;
                let n = pl
                    .iter()
                    .filter(|t| {
                        if pats.is_empty() {
                            t.active()
                        } else {
                            pats.iter().all(|p| p.re.is_match(t.field(p.field)))
                        }
                    })
                    .count();
                Some(n as f64)
            }
            Operand::Device { device, figure } => {
                o.devices.get(&format!("{device}.{figure}")).copied()
            }
        }
    }
}

/// pt-stalk's `--cycles`: fires when the trigger held in `need` consecutive checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cycles {
    /// Consecutive true checks needed (at least 1).
    pub need: u32,
    /// Consecutive true checks so far.
    pub count: u32,
}

impl Cycles {
    /// A counter that fires after `need` consecutive true checks (0 is taken as 1).
    pub fn new(need: u32) -> Cycles {
        Cycles {
            need: need.max(1),
            count: 0,
        }
    }
    /// Records one check; true when the trigger fires now.
    pub fn check(&mut self, matched: bool) -> bool {
        if matched {
            self.count = self.count.saturating_add(1);
        } else {
            self.count = 0;
        }
        self.count >= self.need
    }
    /// After a collection, the count starts over (pt-stalk sets cycles_true=0).
    pub fn reset(&mut self) {
        self.count = 0;
    }
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            text: self.text.to_string(),
            at: self.pos + 1,
            message: message.into(),
        }
    }
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|c| c.1)
    }
    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }
    fn byte_at(&self, pos: usize) -> usize {
        self.chars.get(pos).map_or(self.text.len(), |c| c.0)
    }
    /// Consumes keyword `kw` (case-insensitive) when it stands as a whole word here.
    fn keyword(&mut self, kw: &str) -> bool {
        self.ws();
        let start = self.byte_at(self.pos);
        let rest = &self.text[start..];
        if rest.len() >= kw.len()
            && rest[..kw.len()].eq_ignore_ascii_case(kw)
            && !rest[kw.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            self.pos += kw.chars().count();
            return true;
        }
        false
    }
    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.and()?;
        while self.keyword("or") {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }
    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.atom()?;
        while self.keyword("and") {
            e = Expr::And(Box::new(e), Box::new(self.atom()?));
        }
        Ok(e)
    }
    fn ident(&mut self) -> String {
        self.ws();
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                s.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        s
    }
    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        self.ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format!("expected `{c}`")))
        }
    }
    fn atom(&mut self) -> Result<Expr, ParseError> {
        self.ws();
        if self.peek() == Some('(') {
            self.pos += 1;
            let e = self.or()?;
            self.expect(')')?;
            return Ok(e);
        }
        let start = self.pos;
        let operand = self.operand()?;
        let op = self.op()?;
        let threshold = self.threshold(&operand)?;
        let text = self.text[self.byte_at(start)..self.byte_at(self.pos)]
            .trim()
            .to_string();
        Ok(Expr::Cmp(Cmp {
            operand,
            op,
            threshold,
            text,
        }))
    }
    fn operand(&mut self) -> Result<Operand, ParseError> {
        let name = self.ident();
        if name.is_empty() {
            return Err(self
                .err("expected a status variable, rate(NAME), processlist(...) or DEVICE.FIGURE"));
        }
        self.ws();
        match self.peek() {
            Some('(') if name.eq_ignore_ascii_case("rate") => {
                self.pos += 1;
                let v = self.ident();
                if v.is_empty() {
                    return Err(self.err("expected a status variable inside rate(...)"));
                }
                self.expect(')')?;
                Ok(Operand::Rate(v))
            }
            Some('(') if name.eq_ignore_ascii_case("processlist") => {
                self.pos += 1;
                self.patterns().map(Operand::Processlist)
            }
            Some('(') => Err(self.err(format!(
                "unknown function `{name}`: the functions are rate(NAME) and processlist(FIELD~'RE')"
            ))),
            Some('.') => {
                self.pos += 1;
                let fig = self.ident();
                match DevFigure::parse(&fig) {
                    Some(figure) => Ok(Operand::Device {
                        device: name,
                        figure,
                    }),
                    None => Err(self.err(format!("unknown device figure `{fig}`: use await, r_await, w_await, util, r_s, w_s, rkb_s, wkb_s or queue"))),
                }
            }
            _ => Ok(Operand::Status(name)),
        }
    }
    fn patterns(&mut self) -> Result<Vec<Pattern>, ParseError> {
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(')') {
            self.pos += 1;
            return Ok(out);
        }
        loop {
            let f = self.ident();
            let field = match f.to_ascii_lowercase().as_str() {
                "user" => Field::User,
                "host" => Field::Host,
                "db" => Field::Db,
                "command" => Field::Command,
                "state" => Field::State,
                "info" => Field::Info,
                _ => {
                    return Err(self.err(format!(
                    "unknown processlist field `{f}`: use user, host, db, command, state or info"
                )))
                }
            };
            self.expect('~')?;
            self.ws();
            let q = self.peek();
            if !matches!(q, Some('\'' | '"')) {
                return Err(self.err("expected a quoted regular expression after `~`"));
            }
            self.pos += 1;
            let mut pat = String::new();
            loop {
                match self.peek() {
                    None => return Err(self.err("unterminated quoted regular expression")),
                    Some(c) if Some(c) == q => {
                        self.pos += 1;
                        break;
                    }
                    Some(c) => {
                        pat.push(c);
                        self.pos += 1;
                    }
                }
            }
            let re = regex::RegexBuilder::new(&pat)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| self.err(format!("regular expression {pat:?}: {e}")))?;
            out.push(Pattern { field, re });
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(')') => {
                    self.pos += 1;
                    return Ok(out);
                }
                _ => return Err(self.err("expected `,` or `)` in processlist(...)")),
            }
        }
    }
    fn op(&mut self) -> Result<Op, ParseError> {
        self.ws();
        let two: String = self.chars[self.pos..].iter().take(2).map(|c| c.1).collect();
        let (op, n) = match two.as_str() {
            ">=" => (Op::Ge, 2),
            "<=" => (Op::Le, 2),
            "!=" => (Op::Ne, 2),
            "==" => (Op::Eq, 2),
            _ => match two.chars().next() {
                Some('>') => (Op::Gt, 1),
                Some('<') => (Op::Lt, 1),
                Some('=') => (Op::Eq, 1),
                _ => return Err(self.err("expected a comparison: > >= < <= = !=")),
            },
        };
        self.pos += n;
        Ok(op)
    }
    fn threshold(&mut self, operand: &Operand) -> Result<f64, ParseError> {
        self.ws();
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e')
        {
            self.pos += 1;
        }
        let num: String = self.chars[start..self.pos].iter().map(|c| c.1).collect();
        let v: f64 = num
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                let mut e = self.err(format!("expected a number, found {num:?}"));
                e.at = start + 1;
                e
            })?;
        let unit_start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '%')
        {
            self.pos += 1;
        }
        let unit: String = self.chars[unit_start..self.pos]
            .iter()
            .map(|c| c.1)
            .collect();
        let time = matches!(operand, Operand::Device { figure, .. } if figure.is_time());
        let pct = matches!(
            operand,
            Operand::Device {
                figure: DevFigure::Util,
                ..
            }
        );
        let scaled = match unit.as_str() {
            "" => Some(v),
            "ms" if time => Some(v),
            "us" if time => Some(v / 1000.0),
            "s" if time => Some(v * 1000.0),
            "%" if pct => Some(v),
            "k" | "K" if !time && !pct => Some(v * 1e3),
            "M" if !time && !pct => Some(v * 1e6),
            "G" if !time && !pct => Some(v * 1e9),
            _ => None,
        };
        scaled.ok_or_else(|| {
            let mut e = self.err(format!(
                "unit `{unit}` does not fit this operand (latencies take ms, us or s; util takes %; counts take k, M or G)"
            ));
            e.at = unit_start + 1;
            e
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs() -> Observed {
        let mut o = Observed::default();
        o.status.insert("threads_running".into(), 60.0);
        o.status.insert("threads_connected".into(), 100.0);
        o.rates.insert("innodb_rows_read".into(), 250_000.0);
        o.devices.insert("vda.await".into(), 12.5);
        o.devices.insert("vda.util".into(), 97.0);
        let t = |user: &str, command: &str, state: &str| Thread {
            user: user.into(),
            command: command.into(),
            state: state.into(),
            ..Thread::default()
        };
        o.processlist = Some(vec![
            t("batch", "Query", "Waiting for table level lock"),
            t("batch", "Query", "Waiting for table metadata lock"),
            t("app", "Query", "Sending data"),
            t("app", "Sleep", ""),
            t("system user", "Daemon", "InnoDB purge worker"),
        ]);
        o
    }

    fn holds(s: &str) -> bool {
        Expr::parse(s).unwrap().eval(&obs()).0
    }

    #[test]
    fn status_values_and_rates() {
        assert!(holds("Threads_running>50"));
        assert!(!holds("Threads_running>60"));
        assert!(holds("Threads_running>=60"));
        assert!(holds("threads_running = 60"));
        assert!(holds("rate(Innodb_rows_read)>200000"));
        assert!(holds("rate(Innodb_rows_read)>200k"));
        assert!(!holds("rate(Innodb_rows_read)>0.3M"));
    }

    #[test]
    fn missing_values_are_false() {
        // Unknown variable, a rate at the first check, an absent device: never true, even
        // with `<`, as pt-stalk treats an empty value as not matched.
        assert!(!holds("No_such_var<1"));
        assert!(!holds("rate(Threads_connected)<1"));
        assert!(!holds("sdz.await<1ms"));
        let (m, v) = Expr::parse("No_such_var>1 or Threads_running>1")
            .unwrap()
            .eval(&obs());
        assert!(m);
        assert_eq!(
            v,
            vec![
                ("No_such_var>1".to_string(), None),
                ("Threads_running>1".to_string(), Some(60.0))
            ]
        );
    }

    #[test]
    fn processlist_counts() {
        assert!(holds("processlist(state~'Waiting for.*lock')>=2"));
        assert!(!holds("processlist(state~'Waiting for.*lock')>2"));
        assert!(holds("processlist(user~'^batch$', state~'table level')=1"));
        // No pattern: active threads (not Sleep, not daemons): 3.
        assert!(holds("processlist()=3"));
        // Case-insensitive, like grep -i.
        assert!(holds("processlist(state~'WAITING')=2"));
        // The comparison's text keeps the pattern's spaces.
        let (_, v) = Expr::parse(" processlist(state~'Waiting for.*lock') > 1 ")
            .unwrap()
            .eval(&obs());
        assert_eq!(v[0].0, "processlist(state~'Waiting for.*lock') > 1");
    }

    #[test]
    fn devices_with_units() {
        assert!(holds("vda.await>10ms"));
        assert!(holds("vda.await>12000us"));
        assert!(!holds("vda.await>0.02s"));
        assert!(holds("vda.util>95%"));
        assert!(holds("vda.util>95"));
    }

    #[test]
    fn precedence_and_parentheses() {
        // and binds tighter than or.
        assert!(holds("Threads_running>100 and vda.util>1 or vda.await>1ms"));
        assert!(!holds(
            "Threads_running>100 and (vda.util>1 or vda.await>1ms)"
        ));
        assert!(holds("(Threads_running>50) AND (vda.util>95% OR x>1)"));
    }

    #[test]
    fn needs_lists_what_to_sample() {
        let n = Expr::parse("vda.await>5ms or (processlist()>2 and sdb.util>1 and vda.util>2)")
            .unwrap()
            .needs();
        assert!(!n.status);
        assert!(n.processlist);
        assert_eq!(n.devices, vec!["vda".to_string(), "sdb".to_string()]);
        assert!(Expr::parse("rate(Questions)>1").unwrap().needs().status);
        let n = Expr::parse("rate(Questions)>1 or questions>5 or Threads_running>2")
            .unwrap()
            .needs();
        assert_eq!(n.status_vars, ["Questions", "Threads_running"]);
    }

    #[test]
    fn errors_say_where() {
        let e = |s: &str| Expr::parse(s).unwrap_err();
        assert_eq!(e("Threads_running").at, 16);
        assert!(e("Threads_running").message.contains("comparison"));
        assert_eq!(e("Threads_running>abc").at, 17);
        assert!(e("vda.await>5%").message.contains("unit"));
        assert!(e("vda.speed>5").message.contains("unknown device figure"));
        assert!(e("processlist(user~batch)>1").message.contains("quoted"));
        assert!(e("processlist(state~'(')>1")
            .message
            .contains("regular expression"));
        assert!(e("processlist(who~'x')>1")
            .message
            .contains("unknown processlist field"));
        assert!(e("avg(x)>1").message.contains("unknown function"));
        assert!(e("a>1 b>2").message.contains("end of the trigger"));
        assert!(e("(a>1").message.contains("`)`"));
        assert!(e("").message.contains("expected a status variable"));
        assert!(e("a>1 and").message.contains("expected a status variable"));
    }

    #[test]
    fn cycles_are_consecutive_like_pt_stalk() {
        let mut c = Cycles::new(3);
        assert!(!c.check(true));
        assert!(!c.check(true));
        assert!(!c.check(false)); // a false check starts over
        assert!(!c.check(true));
        assert!(!c.check(true));
        assert!(c.check(true));
        assert!(c.check(true)); // still true until the caller collects and resets
        c.reset();
        assert!(!c.check(true));
        let mut one = Cycles::new(0);
        assert!(one.check(true));
    }
}
