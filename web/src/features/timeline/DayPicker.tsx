import { addDays, formatDay } from '../../components/time';

/** A day in the organization's time zone: the previous and next day, or any date. */
export function DayPicker({ day, today, onChange }: { day: string; today: string; onChange: (day: string) => void }) {
  return (
    <div className="day-picker" role="group" aria-label="Day">
      <button type="button" className="button button--secondary" onClick={() => onChange(addDays(day, -1))} aria-label="Previous day">
        ←
      </button>
      <label>
        <span className="visually-hidden">Day</span>
        <input type="date" value={day} max={today} required onChange={(e) => e.target.value && onChange(e.target.value)} />
      </label>
      <button
        type="button"
        className="button button--secondary"
        onClick={() => onChange(addDays(day, 1))}
        disabled={day >= today}
        aria-label="Next day"
      >
        →
      </button>
      <span className="day-picker__name" aria-live="polite">
        {day === today ? 'Today' : formatDay(day)}
      </span>
    </div>
  );
}
