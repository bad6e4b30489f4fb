"""A fake of MicroPython's ``rp2`` module: PIO programs are not run, but every
word put into a state machine is recorded (on the board, per state machine),
so a WS2812 chain's colours can be read back with ``Board.ws2812``."""

import types


class PIO:
    """Constants of ``rp2.PIO``."""

    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    JOIN_NONE = 0
    JOIN_TX = 1
    JOIN_RX = 2


class _Instr:
    """One PIO instruction as the assembler DSL builds it: ``op(args).side(n) [delay]``."""

    def __init__(self, program, op, args):
        self.op, self.args, self.sideset, self.delay = op, args, None, 0
        program.instructions.append(self)

    def side(self, value):
        self.sideset = value
        return self

    def __getitem__(self, delay):
        if not 0 <= delay <= 31:
            raise ValueError("PIO delay %r out of range" % (delay,))
        self.delay = delay
        return self


class PIOProgram:
    """What ``@asm_pio`` made of a function: its instructions (op, args, side-set,
    delay), labels and the decorator's options.  Not executed, but assembled the
    way MicroPython does it (the body runs with the DSL's names as globals), so a
    misspelt instruction or an unknown label fails here as on the board."""

    OPS = ("jmp", "wait", "in_", "out", "push", "pull", "mov", "irq", "set", "nop")
    OPERANDS = ("x", "y", "not_x", "not_y", "x_dec", "y_dec", "x_not_y", "pin", "not_osre",
                "pins", "null", "isr", "osr", "pc", "exec", "status", "block", "noblock",
                "clear", "rel", "gpio", "invert", "reverse", "ifempty", "iffull")

    def __init__(self, func, options):
        self.name = func.__name__
        self.options = options
        self.instructions = []
        self.labels = {}
        dsl = {"__builtins__": __builtins__}
        for op in self.OPS:
            dsl[op] = (lambda name: lambda *args: _Instr(self, name.rstrip("_"), args))(op)
        for name in self.OPERANDS:
            dsl[name] = name
        dsl["label"] = lambda name: self.labels.__setitem__(name, len(self.instructions))
        dsl["wrap_target"] = lambda: self.labels.__setitem__("<wrap_target>", len(self.instructions))
        dsl["wrap"] = lambda: self.labels.__setitem__("<wrap>", len(self.instructions))
        types.FunctionType(func.__code__, dsl)()
        for instr in self.instructions:
            if instr.op == "jmp" and isinstance(instr.args[-1], str) and instr.args[-1] not in self.labels:
                raise ValueError("PIO program %s: unknown label %r" % (self.name, instr.args[-1]))
        if len(self.instructions) > 32:
            raise ValueError("PIO program %s: %d instructions, 32 fit" % (self.name, len(self.instructions)))


def asm_pio(**options):
    """Decorator: assemble the program into a :class:`PIOProgram` record."""
    def wrap(func):
        return PIOProgram(func, options)
    return wrap


class StateMachine:
    """``rp2.StateMachine``: ``put`` records a frame (the list of 32-bit words, each
    shifted left by ``shift`` as MicroPython does) on the board."""

    _board = None

    def __init__(self, sm_id, program=None, freq=-1, **pins):
        if not 0 <= sm_id <= 7:
            raise ValueError("StateMachine %r doesn't exist" % (sm_id,))
        self.id = sm_id
        self.program = program
        self.freq = freq
        self.pins = pins
        self.running = False
        self.frames = []
        self._board.pio[sm_id] = self

    def active(self, value=None):
        if value is None:
            return self.running
        self.running = bool(value)
        return None

    def put(self, value, shift=0):
        if not self.running:
            raise RuntimeError("StateMachine %d: put while inactive would block forever" % self.id)
        words = [value] if isinstance(value, int) else list(value)
        with self._board.lock:
            self.frames.append([(w << shift) & 0xFFFFFFFF for w in words])

    def init(self, program, freq=-1, **pins):
        self.program, self.freq, self.pins = program, freq, pins


def make_rp2(board):
    """An ``rp2`` module whose state machines record on ``board``."""
    mod = types.ModuleType("rp2")
    mod.PIO = PIO
    mod.asm_pio = asm_pio
    mod.StateMachine = type("StateMachine", (StateMachine,), {"_board": board})
    return mod
