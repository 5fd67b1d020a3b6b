//! Kubernetes resource quantities (`resources.limits.memory`): a decimal number and a suffix,
//! binary (`Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei`), decimal (`k`, `M`, `G`, `T`, `P`, `E`, and
//! `m`, `u`, `n` below one) or an exponent (`1e9`, `5E3`), as apimachinery's
//! `resource.ParseQuantity` reads them. Takes the text; yields bytes.

/// The number of bytes `text` stands for (`1Gi` → 1073741824, `512M` → 512000000, `1e9`,
/// `129.5Mi`), rounded up to a whole byte; `None` for what is not a quantity, a negative one, or
/// one beyond `u64`.
pub fn parse_quantity(text: &str) -> Option<u64> {
    let text = text.trim().trim_matches('"').trim_matches('\'');
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(number_end);
    if number.is_empty() || number == "+" || number == "." || number.matches('.').count() > 1 {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let factor: f64 = match suffix {
        "" => 1.0,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        exp => {
            let digits = exp.strip_prefix(['e', 'E'])?;
            let power: i32 = digits.parse().ok().filter(|p: &i32| p.abs() <= 30)?;
            10f64.powi(power)
        }
    };
    let bytes = (value * factor).ceil();
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}
