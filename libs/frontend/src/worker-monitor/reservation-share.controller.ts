import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { RESERVATIONS_EVENT } from '@sluice/contracts';
import { PeerReservationsService } from './peer-reservations.service';

/** The other replicas' reservations between reports (docs/api.md#nats-subjects). */
@Controller()
export class ReservationShareController {
  constructor(private readonly peers: PeerReservationsService) {}

  @EventPattern(RESERVATIONS_EVENT)
  onReservations(@Payload() payload: unknown): void {
    this.peers.onMessage(payload);
  }
}
