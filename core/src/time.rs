//! JavaScript `Date` pieces the domain and the views share: the time value `new Date(v)`
//! gives a record value, and `Date.prototype.toISOString` (the times of runs, approvals
//! and deletes).
//!
//! Strings are parsed with the ECMAScript date-time string format (`YYYY`, `YYYY-MM`,
//! `YYYY-MM-DD`, `±YYYYYY…`, optionally `THH:mm[:ss[.fff]]` and `Z`/`±HH:mm`). A date-time
//! without an offset is read as UTC here (JavaScript reads it as local time; cdkd's
//! own records hold numbers, so this only touches hand-edited strings). Other
//! spellings V8's legacy parser accepts are not dates here and render as the value.

use serde_json::Value;

use crate::text::js_string;

/// Largest magnitude of a JavaScript time value (ms), ECMAScript TimeClip.
const MAX_TIME: f64 = 8.64e15;
const MS_PER_DAY: i64 = 86_400_000;

/// The time value (ms since the epoch) of `new Date(v)`, or `None` for an Invalid Date.
pub fn time_value(v: &Value) -> Option<i64> {
    match v {
        Value::Null => Some(0),
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_f64().and_then(time_clip),
        Value::String(s) => parse_date_string(s),
        // `new Date([..])` coerces the array to a string and parses that.
        Value::Array(_) => parse_date_string(&js_string(v)),
        Value::Object(_) => None,
    }
}

/// ECMAScript TimeClip: finite and within ±8.64e15, truncated toward zero.
pub fn time_clip(t: f64) -> Option<i64> {
    if !t.is_finite() || t.abs() > MAX_TIME {
        return None;
    }
    Some(t.trunc() as i64)
}

/// `new Date(ms).toISOString()` for a valid time value.
pub fn iso_from_ms(ms: i64) -> String {
    let days = ms.div_euclid(MS_PER_DAY);
    let in_day = ms.rem_euclid(MS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let (hh, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (mm, rest) = (rest / 60_000, rest % 60_000);
    let (ss, milli) = (rest / 1000, rest % 1000);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!("{year}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{milli:03}Z")
}

/// [`iso_from_ms`] to the second: `2026-11-29T15:22:32Z` (the times of runs).
pub fn iso_seconds(ms: i64) -> String {
    let iso = iso_from_ms(ms);
    format!("{}Z", iso.get(..19).unwrap_or(&iso))
}

/// docs/state-views.md, "--long" `Last Modified:` of `state list --long`: only a finite number that is a
/// valid date; anything else is `None` (prints `unknown` / JSON `null`).
pub fn iso_timestamp_or_none(v: Option<&Value>) -> Option<String> {
    match v {
        Some(n @ Value::Number(_)) => time_value(n).map(iso_from_ms),
        _ => None,
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A tiny cursor over ASCII digits and punctuation.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let s = self.b.get(self.i..self.i + n)?;
        if !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += n;
        Some(s.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
}

/// The ECMAScript date-time string format; `None` for anything else.
pub fn parse_date_string(s: &str) -> Option<i64> {
    let mut c = Cursor {
        b: s.as_bytes(),
        i: 0,
    };
    let year = match c.peek()? {
        sign @ (b'+' | b'-') => {
            c.i += 1;
            let y = c.digits(6)?;
            if sign == b'-' {
                if y == 0 {
                    return None;
                }
                -y
            } else {
                y
            }
        }
        _ => c.digits(4)?,
    };
    let (mut month, mut day) = (1u32, 1u32);
    if c.eat(b'-') {
        month = u32::try_from(c.digits(2)?).ok()?;
        if c.eat(b'-') {
            day = u32::try_from(c.digits(2)?).ok()?;
        }
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut ms_in_day = 0i64;
    let mut offset_ms = 0i64;
    if c.eat(b'T') || c.eat(b't') {
        let hh = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        let mi = c.digits(2)?;
        let (mut ss, mut frac) = (0i64, 0i64);
        if c.eat(b':') {
            ss = c.digits(2)?;
            if c.eat(b'.') {
                let start = c.i;
                while c.peek().is_some_and(|b| b.is_ascii_digit()) {
                    c.i += 1;
                }
                let digits = &s[start..c.i];
                if digits.is_empty() {
                    return None;
                }
                let first3: String = digits.chars().chain("000".chars()).take(3).collect();
                frac = first3.parse().ok()?;
            }
        }
        if hh > 24 || mi > 59 || ss > 59 || (hh == 24 && (mi, ss, frac) != (0, 0, 0)) {
            return None;
        }
        ms_in_day = ((hh * 60 + mi) * 60 + ss) * 1000 + frac;
        match c.peek() {
            Some(b'Z' | b'z') => c.i += 1,
            Some(sign @ (b'+' | b'-')) => {
                c.i += 1;
                let oh = c.digits(2)?;
                if !c.eat(b':') {
                    return None;
                }
                let om = c.digits(2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                let off = (oh * 60 + om) * 60_000;
                offset_ms = if sign == b'+' { off } else { -off };
            }
            _ => {}
        }
    }
    if !c.done() {
        return None;
    }
    let t = days_from_civil(year, month, day) * MS_PER_DAY + ms_in_day - offset_ms;
    time_clip(t as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn iso_of_epoch_and_known_instant() {
        assert_eq!(iso_from_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_from_ms(1_777_458_225_000), "2026-04-29T10:23:45.000Z");
        assert_eq!(iso_from_ms(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn iso_seconds_drops_the_milliseconds() {
        assert_eq!(iso_seconds(1_795_965_752_123), "2026-11-29T15:22:32Z");
    }

    #[test]
    fn iso_extended_years_use_six_digits_and_sign() {
        assert_eq!(
            iso_from_ms(8_640_000_000_000_000),
            "+275760-09-13T00:00:00.000Z"
        );
        assert_eq!(
            iso_from_ms(-8_640_000_000_000_000),
            "-271821-04-20T00:00:00.000Z"
        );
    }

    #[test]
    fn date_of_null_true_and_strings() {
        assert_eq!(time_value(&json!(null)), Some(0));
        assert_eq!(time_value(&json!(true)), Some(1));
        assert_eq!(time_value(&json!("2026-04-29")), Some(1_777_420_800_000));
        assert_eq!(
            time_value(&json!("2026-04-29T10:23:45.5+01:00")),
            Some(1_777_458_225_500 - 3_600_000)
        );
        assert_eq!(time_value(&json!("yesterday")), None);
        assert_eq!(time_value(&json!(1e300)), None);
        assert_eq!(time_value(&json!({})), None);
        assert_eq!(time_value(&json!("2021-02-30")), None);
    }
}
