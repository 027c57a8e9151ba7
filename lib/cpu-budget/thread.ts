// The entry of a CPU budget thread (lib/cpu-budget/cpu-budget.ts): the tasks of lib/cpu-budget/tasks.ts, served.
import { serveTasks } from './serve';
import { CPU_TASKS } from './tasks';

serveTasks(CPU_TASKS);
