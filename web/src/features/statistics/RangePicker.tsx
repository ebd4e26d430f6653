import { useState, type FormEvent } from 'react';
import { FormProblem } from '../../components/States';
import { addDays } from '../../components/time';

export interface DayRange {
  from: string;
  to: string;
}

const presets = [7, 30, 90];
const maxDays = 366;

/** A range of days (both inclusive): the last 7, 30 or 90 days, or any two dates. */
export function RangePicker({ range, today, onChange }: { range: DayRange; today: string; onChange: (range: DayRange) => void }) {
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  const [problem, setProblem] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (from > to) return setProblem('The first day comes after the last.');
    if (addDays(from, maxDays - 1) < to) return setProblem(`At most ${maxDays} days.`);
    setProblem('');
    onChange({ from, to });
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Date range">
      <div className="filters__actions range__presets" role="group" aria-label="Last days">
        {presets.map((days) => {
          const preset = { from: addDays(today, -(days - 1)), to: today };
          const current = preset.from === range.from && preset.to === range.to;
          return (
            <button key={days} type="button" className="button button--secondary" aria-pressed={current} onClick={() => onChange(preset)}>
              Last {days} days
            </button>
          );
        })}
      </div>
      <label className="field">
        <span>From</span>
        <input type="date" value={from} max={today} required onChange={(e) => setFrom(e.target.value)} />
      </label>
      <label className="field">
        <span>To</span>
        <input type="date" value={to} max={today} required onChange={(e) => setTo(e.target.value)} />
      </label>
      <div className="filters__actions">
        <button type="submit" className="button">
          Show
        </button>
      </div>
      <FormProblem problem={problem} className="filters__problem" />
    </form>
  );
}
